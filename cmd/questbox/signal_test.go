package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/questbox/questbox/internal/buildtest"
	"github.com/questbox/questbox/ui/api"
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
	dir := shortDir(t)
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

// TestSIGHUPReloadChecksTheConfig sends SIGHUP to a real daemon: it keeps
// running, names each changed key as needing a restart, applies nothing,
// and reports a broken file without dying; SIGTERM still stops it cleanly.
func TestSIGHUPReloadChecksTheConfig(t *testing.T) {
	bin := buildtest.Questbox(t)
	dir := shortDir(t)
	data := filepath.Join(dir, "data")
	cfg := filepath.Join(dir, "questbox.toml")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("[network]\nprobe = \"\"\n")
	d := startProc(t, bin, "--config", cfg, "--data", data, "--tick", "1h")
	waitFor(t, "the daemon to be ready", func() bool { return strings.Contains(d.logText(), "questbox is running") })
	hup := func(waitFor0 string) {
		t.Helper()
		if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the reload to be logged: "+waitFor0, func() bool { return strings.Contains(d.logText(), waitFor0) })
	}

	hup("reload: config read again; nothing changed")

	write("[network]\nprobe = \"\"\n[daemon]\ntick = \"5m\"\nmax_parallel = 3\n")
	hup("reload: config read again and valid; nothing applied")
	log := d.logText()
	for _, k := range []string{"key=daemon.tick", "key=daemon.max_parallel"} {
		if !strings.Contains(log, k) {
			t.Errorf("the reload did not name %s:\n%s", k, log)
		}
	}
	if strings.Contains(log, "key=daemon.data") {
		t.Errorf("the reload named daemon.data, which --data sets:\n%s", log)
	}

	write("[daemon]\ntick = \"soon\"\n")
	hup("reload: the config file does not load")
	if !strings.Contains(d.logText(), "daemon.tick") {
		t.Errorf("the failed reload does not say which key is wrong:\n%s", d.logText())
	}
	// Still serving: the CLI reaches it over the socket.
	// (--config /dev/null: an empty file, the defaults.)
	if out, err := exec.Command(bin, "quest", "list", "--data", data, "--config", os.DevNull).CombinedOutput(); err != nil {
		t.Fatalf("quest list after the reloads: %v\n%s", err, out)
	}
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := d.exit(t, 30*time.Second); code != 0 {
		t.Fatalf("exit %d after SIGTERM, want 0\n%s", code, d.logText())
	}
}
