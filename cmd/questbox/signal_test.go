package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/questbox/questbox/internal/buildtest"
	"github.com/questbox/questbox/internal/daemon/daemontest"
	"github.com/questbox/questbox/ui/api"
	"github.com/questbox/questbox/ui/mqtt/mosquittotest"
)

// procDaemon is a `questbox run` in its own process, logging to a file.
type procDaemon struct {
	cmd  *exec.Cmd
	log  string
	done chan error
}

func startProc(t *testing.T, bin string, args ...string) *procDaemon {
	t.Helper()
	return startProcEnv(t, nil, bin, args...)
}

// startProcEnv is startProc with the environment env (nil: the test's).
func startProcEnv(t *testing.T, env []string, bin string, args ...string) *procDaemon {
	t.Helper()
	p := &procDaemon{log: filepath.Join(t.TempDir(), "daemon.log"), done: make(chan error, 1)}
	logf, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logf.Close() })
	p.cmd = exec.Command(bin, append([]string{"run"}, args...)...)
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

func (p *procDaemon) logText() string {
	b, _ := os.ReadFile(p.log)
	return string(b)
}

// exit waits for the process to end, at most within.
func (p *procDaemon) exit(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err // for the cleanup
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(within):
		t.Fatalf("the daemon did not exit within %s\n%s", within, p.logText())
		return -1
	}
}

// TestSIGTERMDuringAgentRun stops a real `questbox run` with SIGTERM, as
// systemd does, while an agent runs longer than daemon.grace: the daemon
// says it is stopping, the agent is killed after the grace period, the node
// goes back to pending with an interrupted attempt that used no try, the
// daemon exits 0 well within TimeoutStopSec, and the store verifies.
func TestSIGTERMDuringAgentRun(t *testing.T) {
	bin := buildtest.Questbox(t)
	dir := daemontest.ShortDir(t)
	data := filepath.Join(dir, "data")
	out := agentOut(t)
	started := filepath.Join(out, "started")
	cfg := filepath.Join(dir, "questbox.toml")
	os.WriteFile(cfg, []byte(`[daemon]
grace = "1s"
[network]
probe = ""
[providers.slow]
type = "command"
write = ["`+out+`"]
argv = ["sh", "-c", ": > `+started+`; sleep 600"]
`), 0o644)
	qbx := binaryCLI(t, bin, cfg, data)
	qbx(0, "quest", "new", "slow", "--direction", "wait for a very slow agent", "--provider", "slow")

	d := startProc(t, bin, "--config", cfg, "--data", data, "--tick", "1s")
	agent := waitForPID(t, "the agent to start", started, started)
	t.Cleanup(func() { syscall.Kill(-agent, syscall.SIGKILL) })

	sent := time.Now()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := d.exit(t, 60*time.Second); code != 0 {
		t.Fatalf("exit %d after SIGTERM, want 0\n%s", code, d.logText())
	}
	took := time.Since(sent)
	log := d.logText()
	for _, want := range []string{"stopping: no more dispatches", `grace=1s`, "msg=stopped"} {
		if !strings.Contains(log, want) {
			t.Errorf("the daemon's log lacks %q:\n%s", want, log)
		}
	}
	if took < time.Second {
		t.Errorf("the daemon exited %s after SIGTERM, before the 1s grace was up", took)
	}
	// The agent's process group is gone: the grace ended it.
	waitFor(t, "the agent to be killed", func() bool {
		return syscall.Kill(agent, 0) == syscall.ESRCH
	})

	var show api.QuestDetail
	if err := json.Unmarshal([]byte(qbx(0, "quest", "show", "q1", "--json")), &show); err != nil {
		t.Fatal(err)
	}
	if len(show.Nodes) != 1 {
		t.Fatalf("nodes after SIGTERM: %+v", show.Nodes)
	}
	n := show.Nodes[0]
	if n.Status != api.NodePending || n.Tries != 0 {
		t.Errorf("after SIGTERM: node %s is %s with %d tries, want pending with 0", n.ID, n.Status, n.Tries)
	}
	if len(n.Attempts) == 0 || n.Attempts[len(n.Attempts)-1].Outcome != "interrupted" || n.Attempts[len(n.Attempts)-1].TryUsed {
		t.Errorf("after SIGTERM: attempts %+v, want a last interrupted attempt that used no try", n.Attempts)
	}
	qbx(0, "verify")
}

// TestSIGHUPAppliesTheConfig sends SIGHUP to a real daemon. A provider
// added to the file is usable at once: `quest new --provider` through the
// running daemon takes it, and a tick runs it. Keys that need a restart
// are named in one line and not applied. A broken file is refused as a
// whole, each of its problems logged, and the daemon stays on the config
// in force (its generation unchanged); SIGTERM still stops it cleanly.
func TestSIGHUPAppliesTheConfig(t *testing.T) {
	bin := buildtest.Questbox(t)
	dir := daemontest.ShortDir(t)
	data := filepath.Join(dir, "data")
	cfg := filepath.Join(dir, "questbox.toml")
	agent := filepath.Join(dir, "agent.sh")
	answer := "```json\n" + `{"verdict":"dead","evidence":"the provider added by a reload found nothing to keep","citations":[],"new_directions":[]}` + "\n```"
	if err := os.WriteFile(agent, []byte("#!/bin/sh\ncat >/dev/null\ncat <<'EOF'\n"+answer+"\nEOF\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base := "[network]\nprobe = \"\"\n"
	write(base)
	d := startProc(t, bin, "--config", cfg, "--data", data, "--tick", "1h")
	waitFor(t, "the daemon to be ready", func() bool { return strings.Contains(d.logText(), "questbox is running") })
	hup := func(waitFor0 string) {
		t.Helper()
		if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the reload to be logged: "+waitFor0, func() bool { return strings.Contains(d.logText(), waitFor0) })
	}
	qbx := func(args ...string) (string, error) {
		out, err := exec.Command(bin, append(args, "--data", data, "--config", os.DevNull)...).CombinedOutput()
		return string(out), err
	}

	hup("reload: config read again; nothing to apply")
	if out, err := qbx("quest", "new", "early", "--direction", "before the reload", "--provider", "added"); err == nil {
		t.Fatalf("quest new --provider added before the reload succeeded:\n%s", out)
	}

	write(base + "[daemon]\ntick = \"5m\"\nmax_parallel = 3\n[providers.added]\ntype = \"command\"\nargv = [\"/bin/sh\", \"" + agent + "\"]\nvendor = \"local\"\n")
	hup("reload: config applied")
	log := d.logText()
	if !strings.Contains(log, "generation=2") {
		t.Errorf("the applied reload does not name generation 2:\n%s", log)
	}
	restart := ""
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "need a restart") {
			restart = l
		}
	}
	if !strings.Contains(restart, "daemon.tick") || !strings.Contains(restart, "daemon.max_parallel") || strings.Contains(restart, "providers.") {
		t.Errorf("the one line of keys that need a restart: %q, want daemon.tick and daemon.max_parallel (and no provider)", restart)
	}
	if strings.Contains(restart, "daemon.data") {
		t.Errorf("the reload named daemon.data, which --data sets: %q", restart)
	}
	out, err := qbx("quest", "new", "late", "--direction", "after the reload", "--provider", "added", "--mode", "solo")
	if err != nil {
		t.Fatalf("quest new --provider added after the reload: %v\n%s", err, out)
	}
	q, _, _ := strings.Cut(strings.TrimSpace(out), "\n") // its id, then what stderr says
	if out, err := qbx("tick"); err != nil {
		t.Fatalf("tick: %v\n%s", err, out)
	}
	out, err = qbx("status", q)
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	if !strings.Contains(out, "aborted 1") || !strings.Contains(out, "config: generation 2, loaded ") || !strings.Contains(out, cfg) {
		t.Errorf("status after the tick: want the added provider's node aborted by its dead verdict, and config generation 2 from %s:\n%s", cfg, out)
	}

	// Two problems: each is logged, nothing is applied.
	write(base + "[daemon]\ntick = \"soon\"\n[providers.added]\ntype = \"command\"\nargv = [\"/bin/sh\", \"" + agent + "\"]\n[providers.broken]\ntype = \"nope\"\n")
	hup("reload: the config file was refused")
	log = d.logText()
	for _, k := range []string{"daemon.tick", "providers.broken.type"} {
		if !strings.Contains(log, k) {
			t.Errorf("the refused reload does not name the problem at %s:\n%s", k, log)
		}
	}
	if out, err := qbx("quest", "new", "still", "--direction", "after the refused reload", "--provider", "added"); err != nil {
		t.Errorf("quest new --provider added after a refused reload: %v\n%s", err, out)
	}
	if out, _ := qbx("status", q); !strings.Contains(out, "config: generation 2,") {
		t.Errorf("status after a refused reload: want generation 2 still:\n%s", out)
	}
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := d.exit(t, 30*time.Second); code != 0 {
		t.Fatalf("exit %d after SIGTERM, want 0\n%s", code, d.logText())
	}
}

// TestSIGHUPStartsMQTTAndTheDashboardAgain: a reload that adds [mqtt]
// connects the box to the broker (online, and the events of a quest made
// after it), and one that opens the dashboard's reading to the public
// starts the dashboard again on the same address with it.
func TestSIGHUPStartsMQTTAndTheDashboardAgain(t *testing.T) {
	bin := buildtest.Questbox(t)
	b := mosquittotest.Start(t, mosquittotest.Options{})
	sub := b.Subscribe(t, "questbox/#")
	dir := daemontest.ShortDir(t)
	data := filepath.Join(dir, "data")
	cfg := filepath.Join(dir, "questbox.toml")
	base := "[daemon]\ndevice_id = \"hupbox\"\n[network]\nprobe = \"\"\n"
	if err := os.WriteFile(cfg, []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	d := startProc(t, bin, "--config", cfg, "--data", data, "--tick", "1h", "--gpio", "sim", "--listen", addr)
	waitFor(t, "the daemon to be ready", func() bool { return strings.Contains(d.logText(), "questbox is running") })
	metrics := func() int {
		t.Helper()
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := metrics(); code != http.StatusUnauthorized {
		t.Fatalf("GET /metrics before the reload: %d, want 401 (read = password)", code)
	}

	text := base + fmt.Sprintf("[mqtt]\nbroker = %q\nreconnect_max = \"1s\"\ndiscovery = false\n[dashboard]\nread = \"public\"\n", b.URL())
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the reload to apply", func() bool { return strings.Contains(d.logText(), "reload: config applied") })
	for _, l := range []string{"reload: MQTT starts again", "reload: the dashboard starts again"} {
		if !strings.Contains(d.logText(), l) {
			t.Errorf("the reload did not log %q:\n%s", l, d.logText())
		}
	}
	sub.WaitFor("the box online on the broker", func(msgs []mosquittotest.Message) bool {
		m, ok := mosquittotest.Last(msgs, "questbox/hupbox/status")
		return ok && m.Payload == "online"
	})
	if code := metrics(); code != http.StatusOK {
		t.Errorf("GET /metrics after the reload: %d, want 200 (read = public)", code)
	}
	out, err := exec.Command(bin, "quest", "new", "after", "--direction", "published by the reloaded MQTT", "--provider", "external", "--data", data, "--config", os.DevNull).CombinedOutput()
	if err != nil {
		t.Fatalf("quest new: %v\n%s", err, out)
	}
	sub.WaitFor("the new quest's state", func(msgs []mosquittotest.Message) bool {
		_, ok := mosquittotest.Last(msgs, "questbox/hupbox/quest/q1/state")
		return ok
	})
}
