package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/engine/storetest"
	"github.com/questbox/questbox/internal/buildtest"
	"github.com/questbox/questbox/internal/daemon/daemontest"
	"github.com/questbox/questbox/ui/api"
)

// schema8Logs makes the store in data a schema-8 one whose pending nodes
// hold a log of 2 to 4 attempts in their records, as questbox v0.8.0
// wrote them, and returns each node's log (outcome: feedback, in order).
func schema8Logs(t *testing.T, data string) map[string][]string {
	t.Helper()
	path := filepath.Join(data, engine.StoreFile)
	logs := map[string][]string{}
	at := time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC)
	err := storetest.RewriteRecords(path, "nodes", func(_, v []byte) []byte {
		var rec map[string]json.RawMessage
		if err := json.Unmarshal(v, &rec); err != nil {
			t.Errorf("a node record does not decode: %v", err)
			return nil
		}
		var id, status string
		json.Unmarshal(rec["id"], &id)
		json.Unmarshal(rec["status"], &status)
		if status != "pending" {
			return nil
		}
		var log []map[string]any
		for j := range 2 + len(logs)%3 {
			fb := fmt.Sprintf("%s, try %d: the answer was not JSON", id, j)
			log = append(log, map[string]any{"at": at.Add(time.Duration(j) * time.Minute), "outcome": "FAIL", "feedback": fb, "try_used": true})
			logs[id] = append(logs[id], "FAIL: "+fb)
		}
		rec["attempts"], _ = json.Marshal(log)
		rec["tries"], _ = json.Marshal(len(log))
		out, _ := json.Marshal(rec)
		return out
	})
	if err == nil {
		err = storetest.SetSchema(path, 8)
	}
	if err != nil {
		t.Fatal(err)
	}
	return logs
}

// TestUpgradeKilledBetweenParts kills the real daemon with SIGKILL in the
// middle of the 8 -> 9 upgrade, two of its parts committed, before READY:
// verify refuses the store naming the interrupted upgrade; the next start
// finishes it and comes up; verify passes, and every node's log is whole.
// The migratefault build moves one node a part and stops in the third,
// saying so on stderr: the kill is at that point, not after a delay, once
// the daemon has asked systemd's stand-in for more time to start (the
// first ask comes extendEvery, 10 s, into the open).
func TestUpgradeKilledBetweenParts(t *testing.T) {
	bin := buildtest.Questbox(t)
	fault := buildtest.Build(t, buildtest.Variant{Tags: "migratefault"})
	dir := daemontest.ShortDir(t)
	data := filepath.Join(dir, "data")
	cfg := os.Getenv("QUESTBOX_CONFIG")
	qbx := binaryCLI(t, bin, cfg, data)
	qbx(0, "quest", "new", "old", "--direction", "a year-old box's quest", "--provider", "external")
	var hyps []string
	for i := range 12 {
		hyps = append(hyps, fmt.Sprintf("hypothesis %02d, retried on v0.8.0", i))
	}
	qbx(0, append([]string{"scan", "q1"}, hyps...)...)
	logs := schema8Logs(t, data)
	if len(logs) != 12 {
		t.Fatalf("%d nodes hold a log, want 12", len(logs))
	}

	// Under a stand-in for systemd: the upgrade runs before READY, under
	// the start-up's extended timeout.
	notify := daemontest.ListenNotify(t, filepath.Join(dir, "notify"))
	d := exec.Command(fault, "run", "--config", cfg, "--data", data, "--tick", "1h")
	d.Env = append(os.Environ(), "NOTIFY_SOCKET="+notify.LocalAddr().String())
	stderr, err := d.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Process.Kill(); d.Wait() })
	var out strings.Builder
	stopped := false
	for sc := bufio.NewScanner(stderr); !stopped && sc.Scan(); {
		out.WriteString(sc.Text() + "\n")
		stopped = strings.HasPrefix(sc.Text(), "migratefault: stopped")
	}
	if !stopped {
		d.Wait()
		t.Fatalf("the daemon ended without stopping in the upgrade:\n%s", out.String())
	}
	// The open asks for more time every extendEvery while the upgrade
	// works (internal/daemon's starttimeout.go); nothing says READY meanwhile.
	for {
		msg := daemontest.ReadNotify(t, notify)
		if strings.Contains(msg, "READY=1") {
			t.Fatalf("the daemon said READY in the middle of its upgrade: %q", msg)
		}
		if strings.HasPrefix(msg, "EXTEND_TIMEOUT_USEC=") {
			break
		}
	}
	if err := d.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := d.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("the daemon's end: %v; want killed", err)
	}

	// Two parts committed: schema 9 with the unfinished upgrade named.
	path := filepath.Join(data, engine.StoreFile)
	for key, want := range map[string]uint64{"schema": 9, "migrating": 8} {
		if v, err := storetest.MetaValue(path, key); err != nil || len(v) != 8 || binary.BigEndian.Uint64(v) != want {
			t.Errorf("meta %s after the kill: %x, %v; want %d", key, v, err, want)
		}
	}
	if v, err := storetest.MetaValue(path, "attempts_migrated"); err != nil || v == nil {
		t.Errorf("meta attempts_migrated after the kill: %x, %v; want the last node moved", v, err)
	}
	verr := exec.Command(bin, "verify", "--config", cfg, "--data", data)
	msg, _ := verr.CombinedOutput()
	if verr.ProcessState.ExitCode() != 2 || !strings.Contains(string(msg), fmt.Sprintf("upgrade from v8 to v%d was interrupted", engine.SchemaVersion)) || !strings.Contains(string(msg), "questbox run") {
		t.Errorf("verify between parts: exit %d, %q; want 2, the interrupted upgrade and what finishes it", verr.ProcessState.ExitCode(), msg)
	}

	daemon := startBinaryDaemon(t, bin, cfg, data, dir)
	var show api.QuestDetail
	waitFor(t, "the restarted daemon's engine", func() bool {
		c := exec.Command(bin, "quest", "show", "q1", "--json", "--config", cfg, "--data", data)
		b, err := c.Output()
		return err == nil && json.Unmarshal(b, &show) == nil
	})
	if err := daemon.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := daemon.Wait(); err != nil {
		t.Fatalf("the restarted daemon: %v", err)
	}
	log, _ := os.ReadFile(filepath.Join(dir, "daemon.log"))
	if !strings.Contains(string(log), fmt.Sprintf("upgrade from v8 to v%d, interrupted", engine.SchemaVersion)) {
		t.Errorf("the restarted daemon's log does not say it finished the interrupted upgrade:\n%s", log)
	}
	if r := qbx(0, "verify"); !strings.HasPrefix(r, "ok:") {
		t.Errorf("verify after the restart: %q", r)
	}
	for key := range map[string]bool{"migrating": true, "attempts_migrated": true} {
		if v, err := storetest.MetaValue(path, key); err != nil || v != nil {
			t.Errorf("meta %s after the upgrade: %x, %v; want none", key, v, err)
		}
	}
	if len(show.Nodes) != 12 {
		t.Fatalf("%d nodes after the upgrade, want 12", len(show.Nodes))
	}
	for _, n := range show.Nodes {
		var got []string
		for _, a := range n.Attempts {
			got = append(got, a.Outcome+": "+a.Feedback)
		}
		if strings.Join(got, "\n") != strings.Join(logs[n.ID], "\n") {
			t.Errorf("%s's log after the upgrade:\n%s\nwant:\n%s", n.ID, strings.Join(got, "\n"), strings.Join(logs[n.ID], "\n"))
		}
	}
}
