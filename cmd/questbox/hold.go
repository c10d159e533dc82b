package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/questbox/questbox/config"
	"github.com/questbox/questbox/device"
	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/ui/api"
)

// storeRecheck is how often a daemon waiting for its store looks at the
// file again (one stat; the store is only reopened when the file changed).
const storeRecheck = 2 * time.Second

// Why the daemon has no engine to serve a command with, but for a refused
// store.
var (
	errStarting = &api.Error{Code: api.CodeUnavailable, Message: "the daemon is starting; try again in a moment"}
	errStopping = &api.Error{Code: api.CodeUnavailable, Message: "the daemon is stopping"}
)

// daemonEngines is api.Engines in the daemon: its one engine once the
// store is open, else why there is none (waiting for a repair, stopping).
// A command that arrives while the daemon starts waits for the store to
// open (milliseconds) instead of failing.
type daemonEngines struct {
	once    sync.Once
	settled chan struct{} // closed by the first set

	mu  sync.Mutex // guards eng and err
	eng *engine.Engine
	err error
}

func newDaemonEngines() *daemonEngines { return &daemonEngines{settled: make(chan struct{})} }

// Engine implements api.Engines.
func (d *daemonEngines) Engine(ctx context.Context, _ bool) (*engine.Engine, error) {
	select {
	case <-d.settled:
	case <-ctx.Done():
		return nil, errStarting
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.eng == nil {
		return nil, d.err
	}
	return d.eng, nil
}

func (d *daemonEngines) set(eng *engine.Engine, err error) {
	d.mu.Lock()
	d.eng, d.err = eng, err
	d.mu.Unlock()
	d.once.Do(func() { close(d.settled) })
}

// holdable reports whether the daemon should wait with a fault on its
// LEDs instead of exiting: the store is damaged (corrupt) or was written by
// a newer questbox. Both need a person, and an appliance that exits shows
// nothing at all. A store in use by another process is not held: that
// process is another daemon or a command that will finish.
func holdable(err error) bool {
	return errors.Is(err, engine.ErrCorrupt) || errors.Is(err, engine.ErrSchema)
}

// hold waits for a refused store to be repaired: the LEDs show the fault
// (red 4 Hz, green dark), the control socket answers every command with the
// reason, systemd hears READY with the reason as STATUS and keeps getting
// watchdog pings (so it does not restart the daemon in a loop), and the
// store is opened as soon as the file changes (`questbox salvage` replaces
// it). It returns the store, or the latest refusal when ctx ends.
func (d *daemon) hold(ctx context.Context, err error) (*engine.Store, error) {
	show := func(err error) {
		d.box.Halt(err)
		d.engines.set(nil, fmt.Errorf("the daemon is waiting for its store (red LED blinking) and runs no command until it opens: %w", err))
	}
	show(err)
	d.log.Error("questbox cannot use its store; the red LED blinks fast and questbox waits, opening it by itself once it is repaired", "err", err)
	d.notify("READY=1\nSTATUS=waiting for the store to be repaired (questbox salvage)")
	watchdog := d.e.getenv("WATCHDOG_USEC") != ""
	path := filepath.Join(d.e.data, engine.StoreFile)
	seen, _ := os.Stat(path)
	t := time.NewTicker(storeRecheck)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, err
		case <-t.C:
		}
		if watchdog {
			d.notify("WATCHDOG=1")
		}
		fi, _ := os.Stat(path)
		if sameFile(seen, fi) {
			continue
		}
		st, oerr := engine.OpenStore(d.e.data, engine.StoreOptions{Check: true, Compact: true})
		if oerr == nil {
			d.notify("STATUS=store opened; starting")
			d.log.Info("the store opens again; starting", "data", d.e.data)
			return st, nil
		}
		if errors.Is(oerr, engine.ErrInUse) {
			continue // salvage is writing it: look again
		}
		seen, err = fi, oerr
		show(err)
		d.log.Error("questbox still cannot use its store", "err", err)
	}
}

// sameFile reports whether a and b describe the same unchanged file (both
// nil: still missing).
func sameFile(a, b os.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// deviceConfig is the device wiring of the gpio section.
func deviceConfig(g config.GPIO) device.Config {
	return device.Config{
		Backend:          g.Backend,
		Chip:             g.Chip,
		Green:            g.Green,
		Amber:            g.Amber,
		Red:              g.Red,
		Button:           g.Button,
		LEDsActiveLow:    g.ActiveLow,
		ButtonActiveHigh: g.ButtonActiveHigh,
		ButtonPull:       g.ButtonPull,
		Debounce:         g.Debounce.Duration,
		LongPress:        g.LongPress.Duration,
		MultiPressGap:    g.MultiPressGap.Duration,
	}
}

// openDevice opens the LEDs and button of g. A configured pin that does not
// exist on this machine (periph, or a chip that is not there) is a
// configuration that does not fit the hardware: exit 1, like a bad config.
// A pin that exists but cannot be claimed (held by another process, no
// permission) is a resource that is unavailable: exit 2, like a store in
// use.
func openDevice(g config.GPIO, log *slog.Logger) (*device.Device, error) {
	dev, err := device.Open(deviceConfig(g), log)
	switch {
	case err == nil:
		return dev, nil
	case errors.Is(err, device.ErrPinNotFound):
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("%w (gpio.backend or --gpio is %s; a machine without these pins needs auto or sim)", err, g.Backend)}
	}
	if _, ok := errors.AsType[*device.PinError](err); ok {
		return nil, &exitError{code: exitStore, err: err}
	}
	return nil, &exitError{code: exitUsage, err: err}
}

// mirrorOnACT reports whether the ACT LED mirrors the worst state:
// gpio.act_led is set and this box lights no external LED, because every
// LED pin is not fitted (negative) or the backend is the simulator.
func mirrorOnACT(g config.GPIO, backend string) bool {
	noLEDs := g.Green < 0 && g.Amber < 0 && g.Red < 0
	return g.ActLED && (noLEDs || backend == device.BackendSim)
}

// daemonRunning reports whether a daemon answers on the control socket.
func daemonRunning(ctx context.Context, sock string) bool {
	_, err := api.NewClient(api.SocketClient(sock), sock).Health(ctx)
	return err == nil
}
