package main

import (
	"context"
	"sync"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/ui/api"
)

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
