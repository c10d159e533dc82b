package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/ui/api"
)

// door is how a verb reaches the API: the running daemon's control socket
// when one answers, else the same handlers served in-process over the
// store (opened read-only for reads, read-write for writes). It is chosen
// at the first call, after the verb has read its input: a slow producer
// piping into `submit` holds neither the daemon nor the store's lock.
type door struct {
	e *env

	client *api.Client
	stop   func()      // stops the in-process server
	local  *localStore // nil with a daemon
}

// api returns the client, choosing the door at the first call.
func (d *door) api(ctx context.Context) *api.Client {
	if d.client != nil {
		return d.client
	}
	sock := d.e.cfg.SocketPath()
	if d.waitForDaemon(ctx, sock) {
		d.client = api.NewClient(api.SocketClient(sock), "daemon on "+sock)
		return d.client
	}
	d.local = &localStore{e: d.e}
	srv := api.New(api.Options{Engines: d.local, Config: d.e.cfg, Version: version, Log: d.e.log, Internal: true})
	hc, stop := api.InProcess(srv)
	d.client, d.stop = api.NewClient(hc, "questbox"), stop
	return d.client
}

// daemonStartWait bounds how long a verb waits for a daemon that holds
// the store but does not answer on its socket yet: a daemon checks,
// compacts and migrates its store before it opens the socket, seconds on
// a big store on an SD card. Past it, the store's own "in use" error says
// the rest (a daemon whose socket is elsewhere: another --config).
var daemonStartWait = 30 * time.Second // a test shortens it

// doorWaitHook, when set (by a test), is called once when a verb starts
// waiting for the process that holds the store.
var doorWaitHook func()

// waitForDaemon reports whether a daemon answers on sock. When none does
// but another process holds the store for writing (a daemon starting or
// stopping, or a writing command), it waits until the socket answers
// (true) or the store is released (false: the verb opens it itself), at
// most daemonStartWait, and says so on stderr when that takes more than
// a second.
func (d *door) waitForDaemon(ctx context.Context, sock string) bool {
	answers := func() bool {
		c, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "unix", sock)
		if err != nil {
			return false
		}
		c.Close()
		return true
	}
	if answers() {
		return true
	}
	if !engine.StoreHeld(d.e.data) {
		return false
	}
	if doorWaitHook != nil {
		doorWaitHook()
	}
	start := time.Now()
	said := false
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for time.Since(start) < daemonStartWait {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
		if answers() {
			return true
		}
		if !engine.StoreHeld(d.e.data) {
			return false
		}
		if !said && time.Since(start) > time.Second {
			said = true
			fmt.Fprintf(d.e.stderr, "questbox: another process holds the store in %s (a daemon starting?); waiting up to %s for its socket %s\n", d.e.data, daemonStartWait, sock)
		}
	}
	return false
}

func (d *door) close() error {
	if d.stop != nil {
		d.stop()
	}
	if d.local != nil {
		return d.local.close()
	}
	return nil
}

// localStore is api.Engines without a daemon: the store opened by this
// process on first use, read-only while only reads were asked, reopened
// read-write for a write.
type localStore struct {
	e *env

	mu    sync.Mutex // guards the fields below
	st    *engine.Store
	eng   *engine.Engine
	wire  *wiring
	write bool
}

// Engine implements api.Engines.
func (l *localStore) Engine(ctx context.Context, write bool) (*engine.Engine, error) {
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
	st, err := engine.OpenStore(l.e.data, engine.StoreOptions{ReadOnly: !write})
	if errors.Is(err, engine.ErrNoStore) {
		// No daemon answered and the directory has no store: the store
		// is most likely elsewhere, and an empty answer would hide it.
		return nil, &api.Error{Code: api.CodeUnavailable, Message: fmt.Sprintf(
			"no store at %s (is the daemon running with another --data? QUESTBOX_DATA?)", l.e.data)}
	}
	if err != nil {
		return nil, err
	}
	w := newWiring(l.e.cfg, l.e.getenv, 0, nil)
	opt, err := w.options(l.e.cfg, l.e.log, st, nil)
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
	w.net.recordTo(func() *engine.Engine { return eng }, l.e.log)
	l.st, l.eng, l.wire, l.write = st, eng, w, write
	return eng, nil
}

// Restore implements api.Restorer without a daemon: the store this
// process may hold is closed, and engine.Restore swaps the file under the
// store's exclusive lock (a daemon starting meanwhile waits for it, then
// opens the restored file).
func (l *localStore) Restore(_ context.Context, backup io.Reader, name string) (engine.RestoreReport, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.closeLocked(); err != nil {
		return engine.RestoreReport{}, err
	}
	return engine.Restore(l.e.data, backup, name, time.Now())
}

func (l *localStore) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closeLocked()
}

func (l *localStore) closeLocked() error {
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

// daemonRunning reports whether a daemon answers on the control socket.
func daemonRunning(ctx context.Context, sock string) bool {
	_, err := api.NewClient(api.SocketClient(sock), sock).Health(ctx)
	return err == nil
}
