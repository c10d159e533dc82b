package api

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
)

// InProcess serves h to the returned client inside this process, over
// in-memory connections: the CLI's door when no daemon runs. Requests go
// through net/http on both sides exactly as they do over the control
// socket, so a verb has one code path and one output either way. stop
// closes the server and waits for its handlers.
func InProcess(h http.Handler) (c *http.Client, stop func()) {
	ln := &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
	srv := &http.Server{Handler: h, MaxHeaderBytes: maxHeader}
	var wg sync.WaitGroup
	wg.Go(func() { srv.Serve(ln) })
	tr := &http.Transport{DialContext: ln.dial, DisableKeepAlives: true}
	return &http.Client{Transport: tr}, func() {
		srv.Close()
		wg.Wait()
	}
}

// pipeListener is a net.Listener whose connections are net.Pipe pairs
// made by dial.
type pipeListener struct {
	conns chan net.Conn
	once  sync.Once
	done  chan struct{}
}

var errPipeClosed = errors.New("in-process API closed")

func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	server, client := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, errPipeClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Accept implements net.Listener.
func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close implements net.Listener.
func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr implements net.Listener.
func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "in-process" }
