package main

import (
	"github.com/questbox/questbox/internal/daemon/daemontest"
	"github.com/questbox/questbox/ui/api"

	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/internal/buildtest"
)

// waitFor polls cond every 50ms, at most attempts times.
// waitFor polls cond until it holds. It synchronises with a daemon in
// another goroutine or process; the bound is only there so a broken build
// fails with a message instead of hanging until go test's own timeout, and
// is far beyond anything a slow machine needs.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestForwardingThroughDaemon runs `questbox run` in-process and drives it
// with CLI verbs, which must reach it over the control socket (the store
// is locked by the daemon, so a CLI that opened it itself would exit 2).
func TestForwardingThroughDaemon(t *testing.T) {
	data := daemontest.ShortDir(t)
	notify := daemontest.ListenNotify(t, filepath.Join(data, "notify"))
	t.Setenv("NOTIFY_SOCKET", notify.LocalAddr().String())

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var dout, derr daemontest.SyncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"run", "--data", data, "--tick", "1h"}, strings.NewReader(""), &dout, &derr)
	}()
	sock := filepath.Join(data, "questbox.sock")
	waitFor(t, "the control socket", func() bool {
		c, err := net.Dial("unix", sock)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	if got := daemontest.ReadNotify(t, notify); got != "READY=1" {
		t.Errorf("systemd got %q, want READY=1", got)
	}
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm() != 0o660 {
		t.Errorf("control socket mode: %v %v, want 0660", fi.Mode(), err)
	}

	d := []string{"--data", data}
	r := must(t, 0, "", append([]string{"quest", "new", "fwd", "--direction", "through the socket", "--provider", "external"}, d...)...)
	if strings.TrimSpace(r.stdout) != "q1" {
		t.Fatalf("quest new through the daemon printed %q", r.stdout)
	}
	var qs []api.Quest
	decode(t, must(t, 0, "", append([]string{"quest", "list", "--json"}, d...)...), &qs)
	if len(qs) != 1 || qs[0].Name != "fwd" {
		t.Fatalf("quest list --json through the daemon: %+v", qs)
	}

	// Files are the client's: --from and --in are read here, --out is
	// written here.
	dir := t.TempDir()
	from := filepath.Join(dir, "hyps")
	os.WriteFile(from, []byte("alpha\nbeta\n"), 0o644)
	must(t, 0, "", append([]string{"scan", "q1", "--from", from}, d...)...)
	in := filepath.Join(dir, "answer")
	os.WriteFile(in, []byte(answer("dead", "alpha was checked and does not work.")), 0o644)
	r = must(t, 0, "", append([]string{"submit", "q1", "--node", "n1", "--in", in}, d...)...)
	if !strings.HasPrefix(r.stdout, "PASS") {
		t.Errorf("submit through the daemon printed %q", r.stdout)
	}
	r = must(t, 3, "garbage", append([]string{"submit", "q1", "--node", "n2"}, d...)...)
	if !strings.Contains(r.stdout, "contract @ answer") {
		t.Errorf("FAIL through the daemon printed %q", r.stdout)
	}
	r = must(t, 1, "", append([]string{"submit", "q1", "--node", "n1", "--in", in}, d...)...)
	if !strings.HasPrefix(r.stderr, "questbox: node n1 is aborted") || strings.Count(r.stderr, "questbox:") != 1 {
		t.Errorf("a refused submit through the daemon said %q", r.stderr)
	}
	out := filepath.Join(dir, "export.jsonl")
	r = must(t, 0, "", append([]string{"export", "q1", "--out", out}, d...)...)
	if lines := nodeLines(readLines(t, out)); len(lines) != 1 || !strings.Contains(r.stderr, "exported 1 node of quest q1 to "+out) {
		t.Errorf("export --out through the daemon: %q, stderr %q", lines, r.stderr)
	}
	must(t, 0, "", append([]string{"export", "q1", "--out", out}, d...)...)
	if lines := nodeLines(readLines(t, out)); len(lines) != 1 {
		t.Errorf("second export appended: %d lines", len(lines))
	}
	must(t, 0, "", append([]string{"verify"}, d...)...)
	must(t, 1, "", append([]string{"status", "q7"}, d...)...)

	// The daemon never touches a path a request names: an export's file is
	// the client's to open and write.
	c := api.NewClient(api.SocketClient(sock), sock)
	written := filepath.Join(dir, "daemon-written")
	must(t, 0, "", append([]string{"scan", "q1", "gamma"}, d...)...)
	must(t, 0, "", append([]string{"quest", "abort-node", "n3"}, d...)...)
	if b, err := c.ExportBegin(context.Background(), "q1", api.ExportRequest{File: written}); err != nil || len(b.Lines) != 1 {
		t.Errorf("raw export begin: %d lines, %v", len(b.Lines), err)
	}
	if _, err := os.Stat(written); err == nil {
		t.Error("the daemon wrote a file named in a request")
	}
	if err := c.ExportAbort(context.Background(), "q1", written); err != nil {
		t.Fatal(err)
	}

	// The daemon printed the events readably.
	waitFor(t, "the verdict events on stdout", func() bool {
		return strings.Contains(dout.String(), "q1 n2 verdict FAIL  contract @ answer")
	})
	if !strings.Contains(dout.String(), "q1 n1 scout      pending → running") {
		t.Errorf("daemon stdout lacks node events:\n%s", dout.String())
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run returned %v\n%s", err, derr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run did not stop after its context was cancelled")
	}
	if got := daemontest.ReadNotify(t, notify); got != "STOPPING=1" {
		t.Errorf("systemd got %q, want STOPPING=1", got)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("the control socket is still there after shutdown: %v", err)
	}
	// Without the daemon, the CLI opens the store itself.
	var st api.Status
	decode(t, must(t, 0, "", append([]string{"status", "q1", "--json"}, d...)...), &st)
	if st.Counts[string(engine.Aborted)] != 2 || st.Counts[string(engine.Pending)] != 1 {
		t.Errorf("after the daemon stopped: %v", st.Counts)
	}
}

// TestCrash kills a real `questbox run` with SIGKILL during an agent run:
// the node comes back pending with an interrupted attempt, no try used,
// and the ledger verifies.
func TestCrash(t *testing.T) {
	bin := buildtest.Questbox(t)
	dir := daemontest.ShortDir(t)
	data := filepath.Join(dir, "data")
	out := agentOut(t)
	started := filepath.Join(out, "started")
	cfg := filepath.Join(dir, "questbox.toml")
	os.WriteFile(cfg, []byte(`[providers.slow]
type = "command"
write = ["`+out+`"]
argv = ["sh", "-c", ": > `+started+`; sleep 600"]
`), 0o644)
	qbx := binaryCLI(t, bin, cfg, data)
	qbx(0, "quest", "new", "slow", "--direction", "wait for a very slow agent", "--provider", "slow")

	daemon := startBinaryDaemon(t, bin, cfg, data, dir)
	agent := waitForPID(t, "the agent to start", started, started)
	// The agent runs in its own process group, which a SIGKILL of the
	// daemon does not reach; clean it up after the test.
	t.Cleanup(func() { syscall.Kill(-agent, syscall.SIGKILL) })
	if err := daemon.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	daemon.Wait()

	// A read changes nothing, not even to recover: the node still shows
	// the run the crash interrupted.
	var show api.QuestDetail
	if err := json.Unmarshal([]byte(qbx(0, "quest", "show", "q1", "--json")), &show); err != nil {
		t.Fatal(err)
	}
	if len(show.Nodes) != 1 || show.Nodes[0].Status != api.NodeRunning {
		t.Fatalf("read after kill -9: %+v, want the one node still running", show.Nodes)
	}
	// The next writing command (or daemon) puts it back to pending.
	qbx(0, "scan", "q1", "a second hypothesis")
	if err := json.Unmarshal([]byte(qbx(0, "quest", "show", "q1", "--json")), &show); err != nil {
		t.Fatal(err)
	}
	n := show.Nodes[0]
	if n.Status != api.NodePending || n.Tries != 0 {
		t.Errorf("after kill -9: node %s is %s with %d tries, want pending with 0", n.ID, n.Status, n.Tries)
	}
	if len(n.Attempts) == 0 || n.Attempts[len(n.Attempts)-1].Outcome != "interrupted" || n.Attempts[len(n.Attempts)-1].TryUsed {
		t.Errorf("after kill -9: attempts %+v, want a last interrupted attempt that used no try", n.Attempts)
	}
	qbx(0, "verify")
}

// TestDemoSeed: `run --demo` seeds one labelled demo quest on an empty
// store, and not again on the next start.
func TestDemoSeed(t *testing.T) {
	data := daemontest.ShortDir(t)
	for range 2 {
		ctx, cancel := context.WithCancel(context.Background())
		var dout, derr daemontest.SyncBuffer
		done := make(chan error, 1)
		go func() {
			done <- run(ctx, []string{"run", "--demo", "--data", data, "--tick", "1h"}, strings.NewReader(""), &dout, &derr)
		}()
		waitFor(t, "the control socket", func() bool {
			c, err := net.Dial("unix", filepath.Join(data, "questbox.sock"))
			if err == nil {
				c.Close()
			}
			return err == nil
		})
		var qs []api.Quest
		decode(t, must(t, 0, "", "quest", "list", "--json", "--data", data), &qs)
		if len(qs) != 1 || qs[0].Provider != "demo" || !strings.HasPrefix(qs[0].Name, "demo:") || qs[0].Mode != engine.ModeTeam {
			t.Fatalf("quests after run --demo: %+v", qs)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("run --demo: %v\n%s", err, derr.String())
		}
	}
}
