package daemon

import (
	"context"
	"io"
	"sync"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/ui/api"
)

// Why the daemon has no engine to serve a command with, but for a refused
// store.
var (
	errStarting  = &api.Error{Code: api.CodeUnavailable, Message: "the daemon is starting; try again in a moment"}
	errStopping  = &api.Error{Code: api.CodeUnavailable, Message: "the daemon is stopping"}
	errRestoring = &api.Error{Code: api.CodeUnavailable, Message: "the daemon is restoring a backup; try again in a moment"}
)

// daemonEngines is api.Engines in the daemon: its one engine once the
// store is open, else why there is none (waiting for a repair, stopping).
// A command that arrives while the daemon starts waits for the store to
// open (milliseconds) instead of failing.
type daemonEngines struct {
	once    sync.Once
	settled chan struct{} // closed by the first set

	// restorer is the daemon (restore.go); set before the socket serves.
	restorer api.Restorer

	mu  sync.Mutex // guards eng, err and then
	eng *engine.Engine
	err error
	// then runs at the next set: a restore's answer, once the daemon
	// serves the restored store (or says why it cannot).
	then func()
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
	then := d.then
	if err != errRestoring {
		d.then = nil
	} else {
		then = nil
	}
	d.mu.Unlock()
	d.once.Do(func() { close(d.settled) })
	if then != nil {
		then()
	}
}

// restoring reports whether the daemon is between sessions for a restore.
func (d *daemonEngines) restoring() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.eng == nil && d.err == errRestoring
}

// afterRestore runs fn at the next set other than errRestoring.
func (d *daemonEngines) afterRestore(fn func()) {
	d.mu.Lock()
	d.then = fn
	d.mu.Unlock()
}

// Restore implements api.Restorer: the daemon restores (restore.go).
func (d *daemonEngines) Restore(ctx context.Context, backup io.Reader, name string) (engine.RestoreReport, error) {
	return d.restorer.Restore(ctx, backup, name)
}
