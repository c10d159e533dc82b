package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/internal/daemon/daemontest"
)

// writeGarbage replaces the store in data with bytes that are not bbolt.
func writeGarbage(t *testing.T, data, text string) {
	t.Helper()
	garbage := []byte(strings.Repeat(text, 400))
	if err := os.WriteFile(filepath.Join(data, engine.StoreFile), garbage, 0o600); err != nil {
		t.Fatal(err)
	}
}

// `questbox run` on a corrupt store: it reports READY with the reason to
// systemd, shows the fault (red 4 Hz, green dark), answers commands with the
// reason (exit 2, salvage named) while `device status` still answers, and
// starts by itself once `questbox salvage` has repaired the store.
func TestDaemonWaitsForARepairedStore(t *testing.T) {
	data := daemontest.ShortDir(t)
	writeGarbage(t, data, "not a bbolt file. ")
	notify := daemontest.ListenNotify(t, filepath.Join(data, "notify"))
	t.Setenv("NOTIFY_SOCKET", notify.LocalAddr().String())

	d := startDaemon(t, data, "--gpio", "sim")
	if got := daemontest.ReadNotify(t, notify); !strings.HasPrefix(got, "READY=1\nSTATUS=waiting for the store") {
		t.Errorf("systemd got %q, want READY with the store as status", got)
	}
	r := must(t, 2, "", "quest", "list", "--data", data)
	if !strings.Contains(r.stderr, "waiting for its store") || !strings.Contains(r.stderr, "questbox salvage --data "+data) {
		t.Errorf("a command while the store is refused said %q", r.stderr)
	}
	v := deviceStatus(t, data)
	if v.Red.Pattern != "blink 4Hz" || v.Green.Pattern != "off" || !v.State.Halted {
		t.Errorf("held: red %q green %q halted %v, want red blink 4Hz, green off, halted", v.Red.Pattern, v.Green.Pattern, v.State.Halted)
	}
	if !strings.Contains(v.Halted, "questbox salvage --data "+data) {
		t.Errorf("device status says halted %q, want the salvage command", v.Halted)
	}

	// Damaged differently: still held.
	writeGarbage(t, data, "still not a bbolt file! ")
	must(t, 2, "", "quest", "list", "--data", data)

	must(t, 0, "", "salvage", "--data", data)
	if got := daemontest.ReadNotify(t, notify); got != "STATUS=store opened; starting" {
		t.Errorf("systemd got %q after the repair", got)
	}
	if got := daemontest.ReadNotify(t, notify); got != "READY=1" {
		t.Errorf("systemd got %q, want READY=1 once running", got)
	}
	must(t, 0, "", "quest", "new", "after", "--direction", "d", "--provider", "external", "--data", data)
	if v := deviceStatus(t, data); v.State.Halted || v.Halted != "" {
		t.Errorf("still halted after the repair: %+v", v.State)
	}

	if err := d.stop(); err != nil {
		t.Fatalf("run returned %v\n%s", err, d.stderr.String())
	}
	if !strings.Contains(d.stderr.String(), "questbox cannot use its store") {
		t.Errorf("the daemon's log does not say why it waits:\n%s", d.stderr.String())
	}
}
