package daemon

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/questbox/questbox/device"
	"github.com/questbox/questbox/device/box"
	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/internal/daemon/daemontest"
)

// TestHungTickStopsTheWatchdog runs the engine's real tick loop with the
// daemon's tickDone and a fake systemd (NOTIFY_SOCKET): healthy ticks feed
// the watchdog; a tick that hangs (here in the online probe the tick asks
// first, as a probe stuck in a dial would) feeds nothing for as long as it
// hangs, so systemd's WatchdogSec restarts the daemon; once the tick gets
// going again the pings come back.
func TestHungTickStopsTheWatchdog(t *testing.T) {
	notify := daemontest.ListenNotify(t, filepath.Join(daemontest.ShortDir(t), "notify"))
	getenv := func(k string) string {
		if k == "NOTIFY_SOCKET" {
			return notify.LocalAddr().String()
		}
		return ""
	}
	st, err := engine.OpenStore(t.TempDir(), engine.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var hang atomic.Bool
	release := make(chan struct{})
	eng, err := engine.New(st, engine.Options{Online: func() bool {
		if hang.Load() {
			<-release
		}
		return true
	}})
	if err != nil {
		t.Fatal(err)
	}
	dev, err := device.Open(device.Config{Backend: device.BackendSim}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	d := &daemon{e: &Env{Getenv: getenv}, box: box.New(dev, box.Options{})}

	const every = 20 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- eng.Serve(ctx, every, d.tickDone) }()

	for i := range 3 {
		if got := daemontest.ReadNotify(t, notify); got != "WATCHDOG=1" {
			t.Fatalf("healthy tick %d: systemd got %q, want WATCHDOG=1", i, got)
		}
	}
	hang.Store(true)
	// The tick in flight when the hang began may still feed once; after
	// that, nothing for fifty tick periods.
	drainUntilQuiet(t, notify, 5*every)
	quiet := 50 * every
	notify.SetReadDeadline(time.Now().Add(quiet))
	if n, err := notify.Read(make([]byte, 64)); err == nil {
		t.Fatalf("the watchdog was fed during a hung tick (%d bytes)", n)
	}

	hang.Store(false)
	close(release)
	if got := daemontest.ReadNotify(t, notify); got != "WATCHDOG=1" {
		t.Fatalf("after the tick came back: systemd got %q, want WATCHDOG=1", got)
	}
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
}

// drainUntilQuiet reads messages until none arrives for quiet.
func drainUntilQuiet(t *testing.T, c interface {
	SetReadDeadline(time.Time) error
	Read([]byte) (int, error)
}, quiet time.Duration) {
	t.Helper()
	for range 100 {
		c.SetReadDeadline(time.Now().Add(quiet))
		if _, err := c.Read(make([]byte, 64)); err != nil {
			return
		}
	}
	t.Fatal("the notify socket never went quiet")
}

// TestWatchdogOnlyAfterAHealthyTick: systemd's watchdog is fed after a tick
// that worked, never after a failed one, so a tick loop that keeps failing
// (a store that cannot be written) is restarted by systemd.
func TestWatchdogOnlyAfterAHealthyTick(t *testing.T) {
	notify := daemontest.ListenNotify(t, filepath.Join(daemontest.ShortDir(t), "notify"))
	getenv := func(k string) string {
		if k == "NOTIFY_SOCKET" {
			return notify.LocalAddr().String()
		}
		return ""
	}
	dev, err := device.Open(device.Config{Backend: device.BackendSim}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	d := &daemon{e: &Env{Getenv: getenv}, box: box.New(dev, box.Options{})}
	d.tickDone(engine.TickReport{}, errors.New("store: input/output error"))
	d.tickDone(engine.TickReport{}, nil)
	if got := daemontest.ReadNotify(t, notify); got != "WATCHDOG=1" {
		t.Fatalf("systemd got %q, want WATCHDOG=1", got)
	}
	// Datagrams are queued by the time Write returns: anything else sent
	// is already there.
	notify.SetReadDeadline(time.Now())
	if n, err := notify.Read(make([]byte, 64)); err == nil {
		t.Errorf("the watchdog was fed twice (once after the failed tick): %d more bytes", n)
	}
}
