package main

// The control socket. bbolt holds an exclusive lock on the store while the
// daemon runs, so every CLI verb first offers itself to the daemon: the
// client sends its arguments, the content of its stdin (only for the verbs
// that read it) and its working directory as one JSON request over the unix
// socket; the daemon runs the same verb code against its own engine with
// captured output and answers {stdout, stderr, code}. One request per
// connection; the client half-closes after the request.
//
// Files named on the command line are the client's: `--in FILE` and
// `--from FILE` are read by the client and travel as stdin; `export --out
// FILE` is written by the client from the JSONL the daemon returns. The
// exactly-once journal of engine.ExportFile then covers the daemon side
// only (the cursor advances when the daemon has sent the lines); a client
// that dies between receiving and writing them loses that batch.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"time"
)

// maxRequest bounds a request read by the daemon: its stdin is at most
// maxHypothesesInput (1 MiB, base64 in the JSON), far below this. A Pi
// Zero has 512 MB; no request may make the daemon hold much of it.
const maxRequest = 4 << 20

// requestTimeout bounds how long the daemon waits for a whole request
// after accepting its connection, and responseTimeout how long it waits
// for the client to take the answer: a client that stalls or never reads
// holds a handler no longer than that. The CLI reads its input (--in,
// --from, stdin) before it connects, so a slow agent piping its answer
// into `submit` is not cut off.
const (
	requestTimeout  = 30 * time.Second
	responseTimeout = 30 * time.Second
)

// maxSocketPath is the longest unix socket path Linux accepts (sun_path
// holds 108 bytes including the terminating NUL).
const maxSocketPath = 107

// request is one CLI invocation sent to the daemon.
type request struct {
	Args  []string `json:"args"`
	Stdin []byte   `json:"stdin,omitempty"`
	Cwd   string   `json:"cwd"`
}

// response is what the invocation printed and its exit code.
type response struct {
	Stdout []byte `json:"stdout"`
	Stderr []byte `json:"stderr"`
	Code   int    `json:"code"`
}

// dialControl connects to the daemon's control socket. An error means no
// daemon answers (no socket file, or a stale one left by a crash).
func dialControl(ctx context.Context, path string) (*net.UnixConn, error) {
	d := net.Dialer{Timeout: time.Second}
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	return c.(*net.UnixConn), nil
}

// forward sends the verb to a running daemon. done is false when no daemon
// answers: the caller opens the store itself.
func (e *env) forward(ctx context.Context, v *verb, cmd command, fs *flag.FlagSet, pos []string) (done bool, err error) {
	sock := e.cfg.SocketPath()
	// Is a daemon there? The probe is closed at once: reading the input
	// (stdin may be an agent still writing its answer) happens before the
	// request's connection is opened, so the daemon's request deadline
	// never cuts off a slow producer.
	probe, err := dialControl(ctx, sock)
	if err != nil {
		return false, nil
	}
	probe.Close()

	req := request{Cwd: e.cwd}
	var after func(*response) error
	if f, ok := cmd.(forwarder); ok {
		if after, err = f.prepare(e, fs, pos, &req); err != nil {
			return true, err
		}
	}
	req.Args = append(strings.Fields(v.name), flagArgs(fs)...)
	req.Args = append(append(req.Args, "--"), pos...)

	fail := func(err error) (bool, error) {
		if ctx.Err() != nil {
			return true, ctx.Err()
		}
		return true, fmt.Errorf("daemon on %s: %v: %w", sock, err, errUnavailable)
	}
	conn, err := dialControl(ctx, sock)
	if err != nil {
		return fail(err) // it stopped since the probe; the input is consumed
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		return fail(err)
	}
	if err := conn.CloseWrite(); err != nil {
		return fail(err)
	}
	var resp response
	if err := json.NewDecoder(conn).Decode(&resp); err != nil {
		return fail(fmt.Errorf("read response: %w", err))
	}
	if after != nil {
		if err := after(&resp); err != nil {
			e.stderr.Write(resp.Stderr)
			return true, err
		}
	}
	e.stdout.Write(resp.Stdout)
	e.stderr.Write(resp.Stderr)
	if resp.Code != exitOK {
		return true, &exitError{code: resp.Code}
	}
	return true, nil
}

// flagArgs renders the flags that were set, except --data and --config
// (the daemon has its own), as --name=value arguments.
func flagArgs(fs *flag.FlagSet) []string {
	var out []string
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "data", "config":
			return
		}
		if l, ok := f.Value.(*listFlag); ok {
			for _, v := range *l {
				out = append(out, "--"+f.Name+"="+v)
			}
			return
		}
		out = append(out, "--"+f.Name+"="+f.Value.String())
	})
	return out
}

// listenControl listens on the control socket at path, mode 0600. A socket
// file left behind by a crash is removed, but only after a dial to it
// failed: a live daemon's socket is never taken over.
func listenControl(ctx context.Context, path string) (*net.UnixListener, error) {
	if len(path) > maxSocketPath {
		return nil, usagef("control socket path %s is %d bytes, unix sockets allow at most %d: set daemon.socket to a shorter path", path, len(path), maxSocketPath)
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != os.ModeSocket {
			// Never remove what is not a socket: a daemon.socket that
			// names the store by mistake must not delete it.
			return nil, usagef("control socket %s: the path exists and is not a socket: set daemon.socket to another path", path)
		}
		if c, err := dialControl(ctx, path); err == nil {
			c.Close()
			return nil, fmt.Errorf("control socket %s: another questbox daemon answers on it: %w", path, errUnavailable)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("control socket %s: remove stale socket: %v: %w", path, err, errUnavailable)
		}
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("control socket: %v: %w", err, errUnavailable)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("control socket %s: %v: %w", path, err, errUnavailable)
	}
	return ln, nil
}

// controlServer answers forwarded requests. Its accept loop and every
// connection handler are owned by it: close stops accepting, wait waits
// for the handlers.
type controlServer struct {
	ln     *net.UnixListener
	handle func(context.Context, request) response
	log    *slog.Logger
	ctx    context.Context // for handlers; outlives the daemon's signal context
	wg     sync.WaitGroup

	readTimeout, writeTimeout time.Duration // requestTimeout, responseTimeout; tests shorten them

	mu      sync.Mutex // guards reading and closed
	reading map[*net.UnixConn]struct{}
	closed  bool
}

func newControlServer(ctx context.Context, ln *net.UnixListener, log *slog.Logger, handle func(context.Context, request) response) *controlServer {
	s := &controlServer{ln: ln, handle: handle, log: log, ctx: ctx,
		readTimeout: requestTimeout, writeTimeout: responseTimeout, reading: map[*net.UnixConn]struct{}{}}
	s.wg.Go(s.accept)
	return s
}

// maxConns bounds the requests served at once: each may hold up to
// maxRequest in memory. Further clients wait in the listen backlog.
const maxConns = 8

func (s *controlServer) accept() {
	slots := make(chan struct{}, maxConns)
	for {
		slots <- struct{}{} // released when its handler returns (handlers are bounded by the deadlines)
		c, err := s.ln.AcceptUnix()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				s.log.Error("control socket accept failed; the CLI falls back to no daemon", "err", err)
			}
			return
		}
		s.wg.Go(func() {
			defer func() { <-slots }()
			s.serve(c)
		})
	}
}

// reads marks c as reading its request, so that close can interrupt it;
// false when the server is closing.
func (s *controlServer) reads(c *net.UnixConn, reading bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !reading {
		delete(s.reading, c)
		return true
	}
	if s.closed {
		return false
	}
	s.reading[c] = struct{}{}
	return true
}

func (s *controlServer) serve(c *net.UnixConn) {
	defer c.Close()
	if !s.reads(c, true) {
		return
	}
	c.SetReadDeadline(time.Now().Add(s.readTimeout))
	var req request
	err := json.NewDecoder(io.LimitReader(c, maxRequest)).Decode(&req)
	s.reads(c, false)
	c.SetWriteDeadline(time.Now().Add(s.writeTimeout))
	if errors.Is(err, io.EOF) {
		return // connected and hung up: a probe for a live daemon
	}
	if err != nil {
		s.log.Warn("control socket: bad request", "err", err)
		var buf bytes.Buffer
		code := report(&buf, usagef("bad request on the control socket: %v", err))
		json.NewEncoder(c).Encode(response{Stderr: buf.Bytes(), Code: code})
		return
	}
	resp := s.handle(s.ctx, req)
	c.SetWriteDeadline(time.Now().Add(s.writeTimeout))
	if err := json.NewEncoder(c).Encode(resp); err != nil {
		s.log.Warn("control socket: client went away before the answer", "args", req.Args, "err", err)
	}
}

// close stops accepting (the socket file is removed) and cuts off the
// requests still being read; requests already read are answered.
func (s *controlServer) close() {
	s.ln.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for c := range s.reading {
		c.SetReadDeadline(time.Now())
	}
}

// wait waits for the accept loop and every handler to return.
func (s *controlServer) wait() { s.wg.Wait() }
