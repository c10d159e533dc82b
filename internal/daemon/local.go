package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/ui/api"
)

// Local is api.Engines without a daemon: the store opened by this
// process on first use, read-only while only reads were asked, reopened
// read-write for a write.
type Local struct {
	e *Env

	mu    sync.Mutex // guards the fields below
	st    *engine.Store
	eng   *engine.Engine
	wire  *wiring
	write bool
}

// NewLocal is the store of e's data directory without a daemon; nothing
// is opened until the first Engine. Close it.
func NewLocal(e *Env) *Local { return &Local{e: e} }

// Engine implements api.Engines.
func (l *Local) Engine(ctx context.Context, write bool) (*engine.Engine, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.eng != nil && (l.write || !write) {
		return l.eng, nil
	}
	if err := l.closeLocked(); err != nil {
		return nil, err
	}
	if write {
		if err := l.e.mayCreateStore(); err != nil {
			return nil, err
		}
	}
	st, err := engine.OpenStore(l.e.Data, engine.StoreOptions{ReadOnly: !write})
	if errors.Is(err, engine.ErrNoStore) {
		// No daemon answered and the directory has no store: the store
		// is most likely elsewhere, and an empty answer would hide it.
		return nil, &api.Error{Code: api.CodeUnavailable, Message: fmt.Sprintf(
			"no store at %s (is the daemon running with another --data? QUESTBOX_DATA?)", l.e.Data)}
	}
	if err != nil {
		return nil, err
	}
	w := newWiring(l.e.Cfg, l.e.Getenv, 0, nil)
	opt, err := w.options(l.e.Cfg, l.e.Log, st, nil)
	if err != nil {
		w.close()
		st.Close()
		return nil, err
	}
	opt.ReadOnly = !write
	eng, err := engine.New(st, opt)
	if err != nil {
		w.close()
		st.Close()
		return nil, err
	}
	w.net.recordTo(func() *engine.Engine { return eng }, l.e.Log)
	l.st, l.eng, l.wire, l.write = st, eng, w, write
	return eng, nil
}

// Restore implements api.Restorer without a daemon: the store this
// process may hold is closed, and engine.Restore swaps the file under the
// store's exclusive lock (a daemon starting meanwhile waits for it, then
// opens the restored file).
func (l *Local) Restore(_ context.Context, backup io.Reader, name string) (engine.RestoreReport, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.closeLocked(); err != nil {
		return engine.RestoreReport{}, err
	}
	return engine.Restore(l.e.Data, backup, name, time.Now())
}

// Close closes the store, if this process opened it.
func (l *Local) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closeLocked()
}

func (l *Local) closeLocked() error {
	if l.eng == nil {
		return nil
	}
	l.eng.Shutdown(0)
	l.wire.close()
	err := l.st.Close()
	l.st, l.eng, l.wire = nil, nil, nil
	if err != nil {
		return fmt.Errorf("close the store: %w", err)
	}
	return nil
}
