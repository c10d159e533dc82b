package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/questbox/questbox/engine"
)

// storeRecheck is how often a daemon waiting for its store looks at the
// file again (one stat; the store is only reopened when the file changed).
const storeRecheck = 2 * time.Second

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
// store is opened as soon as the file changes (`questbox salvage` or
// `questbox restore` replaces it). It returns the store, or the latest refusal when ctx ends.
func (d *daemon) hold(ctx context.Context, err error) (*engine.Store, error) {
	d.holding.Store(true)
	defer d.holding.Store(false)
	show := func(err error) {
		d.box.Halt(err)
		d.engines.set(nil, fmt.Errorf("the daemon is waiting for its store (red LED blinking) and runs no command until it opens: %w", err))
	}
	show(err)
	d.log.Error("questbox cannot use its store; the red LED blinks fast and questbox waits, opening it by itself once it is repaired", "err", err)
	d.notify("READY=1\nSTATUS=waiting for the store to be repaired (questbox salvage)")
	watchdog := d.e.Getenv("WATCHDOG_USEC") != ""
	path := filepath.Join(d.e.Data, engine.StoreFile)
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
		st, oerr := engine.OpenStore(d.e.Data, engine.StoreOptions{Check: true, Compact: true})
		if oerr == nil {
			d.notify("STATUS=store opened; starting")
			d.log.Info("the store opens again; starting", "data", d.e.Data)
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
