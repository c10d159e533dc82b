package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// MaxSocketPath is the longest unix socket path Linux accepts (sun_path
// holds 108 bytes including the terminating NUL).
const MaxSocketPath = 107

// Timeouts of the control socket. A client that connects and says nothing
// holds its connection no longer than HeaderTimeout, and never a handler:
// net/http serves every connection in its own goroutine with its own
// buffers (a few KiB each), so silent or slow clients cannot delay
// others. A request body is read within BodyTimeout; a client that does
// not take its answer is dropped after WriteTimeout.
const (
	HeaderTimeout = 5 * time.Second
	BodyTimeout   = 30 * time.Second
	WriteTimeout  = 5 * time.Minute // a `tick` waits for its runs
	IdleTimeout   = 30 * time.Second
	maxHeader     = 8 << 10
)

// ErrSocketTaken is returned by ListenSocket when another daemon answers on
// the path.
var ErrSocketTaken = errors.New("another questbox daemon answers on the control socket")

// ListenSocket listens on the control socket at path, mode 0660 (owner and
// group), creating its directory (0750) if it is missing. A socket file
// left behind by a crash is removed, but only when no daemon answers on it
// (an HTTP answer, not just a connect): a live daemon's socket is never
// taken over, and a path that is not a socket is never removed.
func ListenSocket(path string) (*net.UnixListener, error) {
	if len(path) > MaxSocketPath {
		return nil, fmt.Errorf("control socket path %s is %d bytes, unix sockets allow at most %d: set daemon.socket to a shorter path", path, len(path), MaxSocketPath)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != os.ModeSocket {
			return nil, fmt.Errorf("control socket %s: the path exists and is not a socket: set daemon.socket to another path", path)
		}
		if answers(path) {
			return nil, fmt.Errorf("control socket %s: %w", path, ErrSocketTaken)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("control socket %s: remove stale socket: %w", path, err)
		}
	}
	// Created 0600 and opened up to the group only once it is ours, so no
	// moment exists where others may connect.
	old := syscall.Umask(0o177)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	syscall.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	if err := os.Chmod(path, 0o660); err != nil {
		ln.Close()
		return nil, fmt.Errorf("control socket %s: %w", path, err)
	}
	return ln, nil
}

// answers reports whether a daemon answers on the socket at path. A
// connect alone proves nothing: a socket left by a killed daemon can still
// accept into its backlog for a moment (a child holding the descriptor),
// so only an HTTP answer counts.
func answers(path string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := NewClient(SocketClient(path), path).Health(ctx)
	if err == nil {
		return true
	}
	// Another questbox that refuses this uid still answers: taken.
	e, ok := err.(*Error)
	return ok && e.Code == CodeForbidden
}

// Peer is the process at the other end of a control socket connection, as
// the kernel reports it (SO_PEERCRED).
type Peer struct {
	PID      int32
	UID, GID uint32
}

type peerKey struct{}

// PeerPolicy decides which peers may use the socket.
type PeerPolicy struct {
	// UID is the daemon's own uid, always allowed, as is root.
	UID uint32
	// GID is the socket's group: members (primary or supplementary) are
	// allowed.
	GID uint32
}

// DefaultPeerPolicy allows this process's user, root and members of its
// group.
func DefaultPeerPolicy() PeerPolicy {
	return PeerPolicy{UID: uint32(os.Getuid()), GID: uint32(os.Getgid())}
}

// allows reports whether p may use the socket.
func (pp PeerPolicy) allows(p Peer) bool {
	if p.UID == 0 || p.UID == pp.UID || p.GID == pp.GID {
		return true
	}
	return inGroup(p.PID, pp.GID)
}

// inGroup reports whether process pid has gid among its supplementary
// groups (from /proc; false when it cannot be read).
func inGroup(pid int32, gid uint32) bool {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(int(pid)) + "/status")
	if err != nil {
		return false
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		rest, ok := strings.CutPrefix(line, "Groups:")
		if !ok {
			continue
		}
		for _, f := range strings.Fields(rest) {
			if f == strconv.FormatUint(uint64(gid), 10) {
				return true
			}
		}
	}
	return false
}

// peerOf reads the credentials of the process at the other end of c.
func peerOf(c net.Conn) (Peer, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return Peer{}, fmt.Errorf("not a unix socket connection")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return Peer{}, err
	}
	var cred *unix.Ucred
	var cerr error
	err = raw.Control(func(fd uintptr) { cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) })
	if err == nil {
		err = cerr
	}
	if err != nil {
		return Peer{}, err
	}
	return Peer{PID: cred.Pid, UID: cred.Uid, GID: cred.Gid}, nil
}

// ConfinedRefusal begins the message the control socket answers (403,
// CodeForbidden) to a peer that runs inside an agent's confinement,
// whatever its uid (confined.go); the reason follows in parentheses.
const ConfinedRefusal = "refused: the caller runs inside an agent's confinement"

// SocketServer serves the API on the control socket. Every request's peer
// is checked: one inside an agent's confinement, or of a user the policy
// does not allow, gets 403 and nothing else.
type SocketServer struct {
	srv  *http.Server
	ln   *net.UnixListener
	log  *slog.Logger
	done chan struct{} // closed when Serve has returned
}

// SocketConfig configures ServeSocket.
type SocketConfig struct {
	Policy PeerPolicy
	// HeaderTimeout bounds how long a connection may stay silent
	// (default HeaderTimeout).
	HeaderTimeout time.Duration
	Log           *slog.Logger
}

// ServeSocket starts serving h on ln until Close. base is the context
// handlers get (it should outlive a daemon's signal context, so requests
// in flight finish while the daemon stops).
func ServeSocket(base context.Context, ln *net.UnixListener, h http.Handler, cfg SocketConfig) *SocketServer {
	log, policy := cfg.Log, cfg.Policy
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.HeaderTimeout <= 0 {
		cfg.HeaderTimeout = HeaderTimeout
	}
	guarded := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := r.Context().Value(peerKey{}).(Peer)
		if ok {
			if why := confinement(p, policy.UID); why != "" {
				log.Warn("control socket: refused a peer inside an agent's confinement", "pid", p.PID, "uid", p.UID, "why", why)
				writeJSON(w, http.StatusForbidden, errorBody{Error: errorf(CodeForbidden, "%s (%s)", ConfinedRefusal, why)})
				return
			}
		}
		if !ok || !policy.allows(p) {
			log.Warn("control socket: refused a peer", "uid", p.UID, "gid", p.GID, "pid", p.PID)
			writeJSON(w, http.StatusForbidden, errorBody{Error: errorf(CodeForbidden,
				"uid %d may not use this questbox's control socket (allowed: uid %d, root, and members of group %d)", p.UID, policy.UID, policy.GID)})
			return
		}
		h.ServeHTTP(w, r)
	})
	s := &SocketServer{ln: ln, log: log, done: make(chan struct{}), srv: &http.Server{
		Handler:           guarded,
		ReadHeaderTimeout: cfg.HeaderTimeout,
		ReadTimeout:       BodyTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    maxHeader,
		BaseContext:       func(net.Listener) context.Context { return base },
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			p, err := peerOf(c)
			if err != nil {
				log.Warn("control socket: cannot read the peer's credentials", "err", err)
				return ctx
			}
			return context.WithValue(ctx, peerKey{}, p)
		},
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("control socket stopped; the CLI falls back to no daemon", "err", err)
		}
	}()
	return s
}

// Close stops accepting (the socket file is removed) and waits up to
// grace for requests in flight to finish, then cuts the rest.
func (s *SocketServer) Close(grace time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		s.srv.Close()
	}
	<-s.done
}
