package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/questbox/questbox/config"
	"github.com/questbox/questbox/device"
	"github.com/questbox/questbox/engine"
)

// writeGarbage replaces the store in data with bytes that are not bbolt.
func writeGarbage(t *testing.T, data, text string) {
	t.Helper()
	garbage := []byte(strings.Repeat(text, 400))
	if err := os.WriteFile(filepath.Join(data, engine.StoreFile), garbage, 0o600); err != nil {
		t.Fatal(err)
	}
}

// A store that fails its check at start-up holds the daemon with red
// blinking 4 Hz; a file that is still damaged keeps it there; once
// salvaged, the store opens and the hold ends.
func TestStoreHoldShowsTheFaultUntilRepaired(t *testing.T) {
	data := t.TempDir()
	writeGarbage(t, data, "not a bbolt file. ")
	_, openErr := engine.OpenStore(data, engine.StoreOptions{Check: true})
	if !holdable(openErr) {
		t.Fatalf("open of garbage: %v, want a holdable error", openErr)
	}
	dev, err := device.Open(device.Config{Backend: device.BackendSim}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	h := newStoreHold(config.Default().GPIO, data, dev, slog.New(slog.DiscardHandler), openErr)
	h.every = 10 * time.Millisecond
	type opened struct {
		st  *engine.Store
		err error
	}
	done := make(chan opened, 1)
	go func() {
		st, err := h.wait(context.Background(), nil)
		done <- opened{st, err}
	}()
	waitFor(t, "red blinking 4 Hz", func() bool {
		s := dev.Snapshot()
		return s.Red.Pattern == "blink 4Hz" && s.Green.Pattern == "off"
	})
	if f := dev.State().Fault; !strings.Contains(f, "questbox salvage --data "+data) {
		t.Errorf("fault %q does not name the salvage command", f)
	}

	// Damaged differently: still held, and the fault says what is wrong now.
	before := h.reason()
	writeGarbage(t, data, "still not a bbolt file! ")
	waitFor(t, "the changed file to be checked", func() bool { return h.reason() != before })
	if !errors.Is(h.reason(), engine.ErrCorrupt) {
		t.Errorf("after a second bad file: %v, want ErrCorrupt", h.reason())
	}

	must(t, 0, "", "salvage", "--data", data)
	var got opened
	select {
	case got = <-done:
	case <-time.After(time.Minute):
		t.Fatal("the hold did not open the salvaged store")
	}
	if got.err != nil {
		t.Fatalf("hold: %v", got.err)
	}
	if _, err := engine.New(got.st, engine.Options{}); err != nil {
		t.Errorf("engine on the salvaged store: %v", err)
	}
	got.st.Close()
}

func TestStoreHoldGivesUpWithTheReason(t *testing.T) {
	data := t.TempDir()
	writeGarbage(t, data, "not a bbolt file. ")
	_, err := engine.OpenStore(data, engine.StoreOptions{Check: true})
	dev, derr := device.Open(device.Config{Backend: device.BackendSim}, nil)
	if derr != nil {
		t.Fatal(derr)
	}
	defer dev.Close()
	h := newStoreHold(config.Default().GPIO, data, dev, slog.New(slog.DiscardHandler), err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if st, err := h.wait(ctx, nil); st != nil || !errors.Is(err, engine.ErrCorrupt) {
		t.Errorf("cancelled hold = %v, %v, want nil, ErrCorrupt", st, err)
	}
}

// `questbox run` on a corrupt store: it reports READY with the reason to
// systemd, answers commands with the reason (exit 2, salvage named),
// and starts by itself once `questbox salvage` has repaired the store.
func TestDaemonWaitsForARepairedStore(t *testing.T) {
	data := shortDir(t)
	writeGarbage(t, data, "not a bbolt file. ")
	notify := listenNotify(t, filepath.Join(data, "notify"))
	t.Setenv("NOTIFY_SOCKET", notify.LocalAddr().String())

	d := startDaemon(t, data, "--gpio", "sim")
	if got := readNotify(t, notify); !strings.HasPrefix(got, "READY=1\nSTATUS=waiting for the store") {
		t.Errorf("systemd got %q, want READY with the store as status", got)
	}
	r := must(t, 2, "", "quest", "list", "--data", data)
	if !strings.Contains(r.stderr, "waiting for its store") || !strings.Contains(r.stderr, "questbox salvage --data "+data) {
		t.Errorf("a command while the store is refused said %q", r.stderr)
	}

	must(t, 0, "", "salvage", "--data", data)
	if got := readNotify(t, notify); got != "STATUS=store opened; starting" {
		t.Errorf("systemd got %q after the repair", got)
	}
	if got := readNotify(t, notify); got != "READY=1" {
		t.Errorf("systemd got %q, want READY=1 once running", got)
	}
	must(t, 0, "", "quest", "new", "after", "--direction", "d", "--provider", "external", "--data", data)

	if err := d.stop(); err != nil {
		t.Fatalf("run returned %v\n%s", err, d.stderr.String())
	}
	if !strings.Contains(d.stderr.String(), "questbox cannot use its store") {
		t.Errorf("the daemon's log does not say why it waits:\n%s", d.stderr.String())
	}
}
