package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/questbox/questbox/config"
	"github.com/questbox/questbox/device"
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

// storeHold is a daemon that cannot open its store: its LEDs show the fault
// (red 4 Hz, and the ACT mirror), its control socket answers every command
// with the reason, and it opens the store as soon as the file changes
// (`questbox salvage` replaces it).
type storeHold struct {
	data  string
	dev   *device.Device
	act   *device.ACT // nil: no ACT mirror
	log   *slog.Logger
	every time.Duration
	// notify sends a state to systemd (nil: nowhere). The hold is a
	// working daemon: it reports READY with the reason as its STATUS, and
	// feeds the watchdog while it waits, so systemd does not restart it in
	// a loop.
	notify   func(state string)
	watchdog bool // systemd set WatchdogSec

	mu  sync.Mutex // guards err
	err error      // why the store cannot be opened now
}

// newStoreHold returns a hold for the store in data that failed with err.
func newStoreHold(g config.GPIO, data string, dev *device.Device, log *slog.Logger, err error) *storeHold {
	h := &storeHold{data: data, dev: dev, log: log, every: storeRecheck, err: err}
	if mirrorOnACT(g, dev.Backend()) {
		h.act = device.NewACT(device.DefaultACTPath, nil, log)
	}
	return h
}

// reason is the current refusal.
func (h *storeHold) reason() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

func (h *storeHold) show(err error) {
	h.mu.Lock()
	h.err = err
	h.mu.Unlock()
	st := device.State{Fault: "store: " + err.Error(), Halted: true}
	h.dev.SetState(st)
	if h.act != nil {
		h.act.Set(device.Worst(st))
	}
}

// handle answers a forwarded command while the store is refused.
func (h *storeHold) handle(_ context.Context, req request) response {
	err := fmt.Errorf("the daemon is waiting for its store (red LED blinking) and runs no command until it opens: %w", h.reason())
	return response{Stderr: []byte("questbox: " + err.Error() + "\n"), Code: exitStore}
}

// wait shows the fault, answers on ln (nil: no control socket) and
// retries until the store opens (returned) or ctx ends (the latest refusal
// is returned). The LEDs and ln are released before it returns.
func (h *storeHold) wait(ctx context.Context, ln *net.UnixListener) (*engine.Store, error) {
	h.show(h.reason())
	h.log.Error("questbox cannot use its store; the red LED blinks fast and questbox waits, opening it by itself once it is repaired",
		"err", h.reason())

	dctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := h.dev.Run(dctx, nil, nil); err != nil && dctx.Err() == nil {
			h.log.Error("the LEDs cannot show the fault", "err", err)
		}
	})
	if h.act != nil {
		wg.Go(func() { h.act.Run(dctx) })
	}
	var srv *controlServer
	if ln != nil {
		srv = newControlServer(context.WithoutCancel(ctx), ln, h.log, h.handle)
	}
	defer func() {
		if srv != nil {
			srv.close()
			srv.wait()
		}
		stop()
		wg.Wait()
	}()

	h.sd("READY=1\nSTATUS=waiting for the store to be repaired (questbox salvage)")
	path := filepath.Join(h.data, engine.StoreFile)
	seen, _ := os.Stat(path)
	t := time.NewTicker(h.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, h.reason()
		case <-t.C:
		}
		if h.watchdog {
			h.sd("WATCHDOG=1")
		}
		fi, _ := os.Stat(path)
		if sameFile(seen, fi) {
			continue
		}
		st, err := engine.OpenStore(h.data, engine.StoreOptions{Check: true})
		if err == nil {
			h.sd("STATUS=store opened; starting")
			h.log.Info("the store opens again; starting", "data", h.data)
			return st, nil
		}
		if errors.Is(err, engine.ErrInUse) {
			continue // salvage is writing it: look again
		}
		seen = fi
		h.show(err)
		h.log.Error("questbox still cannot use its store", "err", err)
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

func (h *storeHold) sd(state string) {
	if h.notify != nil {
		h.notify(state)
	}
}
