package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/questbox/questbox/internal/buildtest"
	"github.com/questbox/questbox/internal/daemon/daemontest"
	"github.com/questbox/questbox/ui/api"
)

// runsConfig writes a config with the network probe off, logs bounded at
// 64KiB a run and 256KiB in all, and providers named by extra (TOML).
func runsConfig(t *testing.T, dir, extra string) string {
	t.Helper()
	cfg := filepath.Join(dir, "questbox.toml")
	text := "[network]\nprobe = \"\"\n[daemon]\nlisten = \"127.0.0.1:0\"\nmax_parallel = 2\n" +
		"[logs]\nper_run = \"64KiB\"\ntotal = \"256KiB\"\n" + extra
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// logsSize is the bytes in every file of data/logs.
func logsSize(t *testing.T, data string) int64 {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(data, "logs"))
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range ents {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		n += info.Size()
	}
	return n
}

// A command agent that crashes with stderr, one that times out and one
// that floods 64 MiB: `runs` says how each ended, `logs` shows the
// stderr, the timeout and the cut, and the logs stay under their total.
func TestRunsAndLogsOfFailingAgents(t *testing.T) {
	dir := daemontest.ShortDir(t)
	data := filepath.Join(dir, "data")
	cfg := runsConfig(t, dir, `
[providers.crash]
type = "command"
argv = ["sh", "-c", "cat >/dev/null; echo 'boom: the model is missing' >&2; exit 3"]
[providers.slow]
type = "command"
# Long enough for the confined start and the echo on a loaded machine.
timeout = "3s"
argv = ["sh", "-c", "cat >/dev/null; echo 'waiting for godot' >&2; exec sleep 600"]
[providers.flood]
type = "command"
argv = ["sh", "-c", "cat >/dev/null; echo FIRST-LINE >&2; yes flooding | head -c 67108864 >&2; echo LAST-LINE >&2; echo done"]
`)
	d := []string{"--config", cfg, "--data", data}
	for _, p := range []string{"crash", "slow", "flood"} {
		must(t, 0, "", append([]string{"quest", "new", p, "--direction", "see what " + p + " does", "--provider", p, "--max-tries", "1", "--mode", "solo"}, d...)...)
	}
	// max_parallel 2: two ticks dispatch the three roots; each tick waits
	// for its runs.
	must(t, 0, "", append([]string{"tick"}, d...)...)
	must(t, 0, "", append([]string{"tick"}, d...)...)

	var runs []api.Run
	decode(t, must(t, 0, "", append([]string{"runs", "--json"}, d...)...), &runs)
	want := map[string]string{"q1": "crashed", "q2": "timeout", "q3": "answered"}
	if len(runs) != 3 {
		t.Fatalf("runs: %+v, want 3", runs)
	}
	for _, r := range runs {
		if r.Exit != want[r.Quest] || r.Running || !r.Log {
			t.Errorf("run %s of %s: exit %q, running %v, log %v; want %q, ended, with a log", r.Name, r.Quest, r.Exit, r.Running, r.Log, want[r.Quest])
		}
		if r.Name != "quest:"+r.Quest+":"+r.Node+":1" || r.Role != "scout" || r.BytesIn == 0 || r.Redacted {
			t.Errorf("run %+v: want its name, its role, the prompt's bytes, not redacted", r)
		}
	}
	if runs[0].ExitCode != 3 {
		t.Errorf("the crashed run's exit code is %d, want 3", runs[0].ExitCode)
	}
	if runs[2].BytesOut < 64<<20 {
		t.Errorf("the flood's bytes out: %d, want its 64 MiB counted", runs[2].BytesOut)
	}
	table := must(t, 0, "", append([]string{"runs"}, d...)...).stdout
	for _, s := range []string{"crashed (exit 3)", "timeout", "answered", "quest:q1:n1:1"} {
		if !strings.Contains(table, s) {
			t.Errorf("runs does not say %q:\n%s", s, table)
		}
	}
	one := must(t, 0, "", append([]string{"runs", "q2", "--node", "n2"}, d...)...).stdout
	if strings.Contains(one, "q1") || !strings.Contains(one, "quest:q2:n2:1") {
		t.Errorf("runs q2 --node n2 lists other runs or not its own:\n%s", one)
	}

	crash := must(t, 0, "", append([]string{"logs", "n1"}, d...)...).stdout
	for _, s := range []string{"boom: the model is missing", "end: crashed (exit 3)"} {
		if !strings.Contains(crash, s) {
			t.Errorf("logs of the crash lacks %q:\n%s", s, crash)
		}
	}
	var lj struct{ Run, Log string }
	decode(t, must(t, 0, "", append([]string{"logs", "n1", "--json"}, d...)...), &lj)
	if lj.Run != "r1" || lj.Log != crash {
		t.Errorf("logs --json: run %q, log %q; want r1 and the text `logs` prints", lj.Run, lj.Log)
	}
	slow := must(t, 0, "", append([]string{"logs", "quest:q2:n2:1"}, d...)...).stdout
	for _, s := range []string{"waiting for godot", "end: timeout"} {
		if !strings.Contains(slow, s) {
			t.Errorf("logs of the timeout lacks %q:\n%s", s, slow)
		}
	}
	flood := must(t, 0, "", append([]string{"logs", runs[2].ID}, d...)...).stdout
	if len(flood) > 64<<10 {
		t.Errorf("the flood's log is %d bytes, over logs.per_run", len(flood))
	}
	for _, s := range []string{"FIRST-LINE", "bytes cut …]", "LAST-LINE", "end: answered"} {
		if !strings.Contains(flood, s) {
			t.Errorf("logs of the flood lacks %q", s)
		}
	}
	if n := logsSize(t, data); n > 256<<10 {
		t.Errorf("logs hold %d bytes, over logs.total", n)
	}

	// More floods than the total holds: the oldest logs go, the total holds.
	for i := range 5 {
		must(t, 0, "", append([]string{"quest", "new", "flood" + strconv.Itoa(i), "--direction", "flood again", "--provider", "flood", "--max-tries", "1", "--mode", "solo"}, d...)...)
	}
	for range 3 {
		must(t, 0, "", append([]string{"tick"}, d...)...)
	}
	if n := logsSize(t, data); n > 256<<10 {
		t.Errorf("after eight runs the logs hold %d bytes, over logs.total", n)
	}
	r := must(t, 1, "", append([]string{"logs", "n1"}, d...)...)
	if !strings.Contains(r.stderr, "dropped to keep the logs under logs.total") {
		t.Errorf("logs of a dropped log: %q", r.stderr)
	}
	decode(t, must(t, 0, "", append([]string{"runs", "q1", "--json"}, d...)...), &runs)
	if len(runs) != 1 || runs[0].Log || runs[0].Exit != "crashed" {
		t.Errorf("runs after the drop: %+v, want the crash still listed, without its log", runs)
	}
}

// logs --follow of a running agent prints its lines as they come and
// ends when the run ends; `logs` through the daemon and without it print
// the same.
func TestLogsFollow(t *testing.T) {
	bin := buildtest.Questbox(t)
	dir := daemontest.ShortDir(t)
	data := filepath.Join(dir, "data")
	step1, step2 := filepath.Join(dir, "step1"), filepath.Join(dir, "step2")
	for _, f := range []string{step1, step2} {
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	script := "cat >/dev/null; echo 'line one' >&2; read x < " + step1 + "; echo 'line two' >&2; read x < " + step2 + "; echo 'line three' >&2; echo answer"
	cfg := runsConfig(t, dir, "[providers.steps]\ntype = \"command\"\ntimeout = \"1h\"\nargv = [\"sh\", \"-c\", \""+script+"\"]\n")
	qbx := binaryCLI(t, bin, cfg, data)
	qbx(0, "quest", "new", "steps", "--direction", "one step at a time", "--provider", "steps", "--max-tries", "1")

	daemon := startBinaryDaemon(t, bin, cfg, data, dir)
	waitFor(t, "the run to start", func() bool {
		var rs []api.Run
		cmd := exec.Command(bin, "runs", "--json", "--config", cfg, "--data", data)
		out, err := cmd.Output()
		return err == nil && json.Unmarshal(out, &rs) == nil && len(rs) == 1 && rs[0].Running
	})

	follow := exec.Command(bin, "logs", "n1", "--follow", "--config", cfg, "--data", data)
	stdout, err := follow.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { follow.Process.Kill(); follow.Wait() })
	var shown strings.Builder
	lines := bufio.NewReader(io.TeeReader(stdout, &shown))
	readUntil := func(want string) {
		t.Helper()
		for {
			l, err := lines.ReadString('\n')
			if err != nil {
				t.Fatalf("follow ended (%v) before %q; it showed:\n%s", err, want, shown.String())
			}
			if strings.TrimSpace(l) == want {
				return
			}
		}
	}
	readUntil("line one")
	release := func(fifo string) {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("go\n")
		f.Close()
	}
	release(step1)
	readUntil("line two")
	if strings.Contains(shown.String(), "line three") {
		t.Fatal("follow showed a line the agent has not written yet")
	}
	release(step2)
	rest, err := io.ReadAll(lines)
	if err != nil {
		t.Fatal(err)
	}
	if err := follow.Wait(); err != nil {
		t.Fatalf("logs --follow: %v", err)
	}
	if !strings.Contains(string(rest), "line three") || !strings.Contains(string(rest), "end: answered") {
		t.Errorf("follow's end: %q, want the last line and the run's end", rest)
	}

	viaDaemon := qbx(0, "logs", "n1")
	followed := qbx(0, "logs", "n1", "--follow") // an ended run: printed, then done
	if err := daemon.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	daemon.Wait()
	alone := qbx(0, "logs", "n1")
	if viaDaemon != shown.String() || alone != viaDaemon || followed != viaDaemon {
		t.Errorf("the log differs:\nfollowed live:\n%s\nthrough the daemon:\n%s\nwithout it:\n%s\nfollow of an ended run:\n%s", shown.String(), viaDaemon, alone, followed)
	}
}

// After kill -9 of the daemon mid-run and a restart, the run is listed as
// interrupted, with the log it had written.
func TestRunInterruptedByCrashKeepsItsLog(t *testing.T) {
	bin := buildtest.Questbox(t)
	dir := daemontest.ShortDir(t)
	data := filepath.Join(dir, "data")
	out := agentOut(t)
	started := filepath.Join(out, "started")
	// The first run writes to stderr, then says it started and hangs;
	// after the restart the agent answers at once.
	script := "cat >/dev/null; if [ -e " + started + " ]; then echo again; exit 0; fi; echo 'before the crash' >&2; : > " + started + "; sleep 600"
	cfg := runsConfig(t, dir, "[providers.hang]\ntype = \"command\"\ntimeout = \"1h\"\nwrite = [\""+out+"\"]\nargv = [\"sh\", \"-c\", \""+script+"\"]\n")
	qbx := binaryCLI(t, bin, cfg, data)
	qbx(0, "quest", "new", "hang", "--direction", "hang until killed", "--provider", "hang", "--mode", "solo", "--max-tries", "1")

	start := func() *exec.Cmd { return startBinaryDaemon(t, bin, cfg, data, dir) }
	daemon := start()
	agent := waitForPID(t, "the agent to start", started, started)
	t.Cleanup(func() { syscall.Kill(-agent, syscall.SIGKILL) })
	// What the agent wrote is in the daemon's pipe until the daemon copies
	// it into the log; a kill before that loses it with the pipe, which no
	// log could keep. The crash comes once the log has it.
	waitFor(t, "the agent's stderr to reach its log", func() bool {
		logs, _ := filepath.Glob(filepath.Join(data, "logs", "*.log"))
		for _, l := range logs {
			if b, err := os.ReadFile(l); err == nil && bytes.Contains(b, []byte("before the crash")) {
				return true
			}
		}
		return false
	})
	if err := daemon.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	daemon.Wait()

	daemon = start()
	var runs []api.Run
	waitFor(t, "the restarted daemon to run the node again", func() bool {
		out, err := exec.Command(bin, "runs", "q1", "--json", "--config", cfg, "--data", data).Output()
		return err == nil && json.Unmarshal(out, &runs) == nil && len(runs) >= 2 && !runs[1].Running
	})
	if r := runs[0]; r.Exit != "interrupted" || r.Outcome != "interrupted" || !r.Log {
		t.Errorf("the run the crash cut: %+v, want interrupted with its log", r)
	}
	if got := qbx(0, "logs", runs[0].ID); !strings.Contains(got, "before the crash") {
		t.Errorf("the interrupted run's log: %q, want what it wrote before the crash", got)
	}
	if got := qbx(0, "runs", "q1"); !strings.Contains(got, "quest:q1:n1:1") || !strings.Contains(got, "interrupted") {
		t.Errorf("runs:\n%s", got)
	}
}
