package main

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/questbox/questbox/internal/daemon"
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
	stop   func()        // stops the in-process server
	local  *daemon.Local // nil with a daemon
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
	d.local = daemon.NewLocal(d.e.daemonEnv())
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
	if !daemon.StoreHeld(d.e.data) {
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
		if !daemon.StoreHeld(d.e.data) {
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
		return d.local.Close()
	}
	return nil
}

// daemonRunning reports whether a daemon answers on the control socket.
func daemonRunning(ctx context.Context, sock string) bool {
	_, err := api.NewClient(api.SocketClient(sock), sock).Health(ctx)
	return err == nil
}
