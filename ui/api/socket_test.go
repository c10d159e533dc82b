package api

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/internal/config"
	"golang.org/x/sys/unix"
)

// dialEnv makes the test binary dial the socket it names, ask
// /api/quests and print the status code, then the error's message (or
// "-") on a second line (see TestMain). spawnEnv makes it start that
// dialer and leave it running, so that the dialer does not descend from
// the process that started the test binary: "orphan" in a process group
// of its own, "orphan-newpid" in a PID namespace of its own (and a user
// namespace, so that no privilege is needed), "leader" in a new session
// that it leads while the dialer, orphaned, runs in it (it waits for its
// stdin to close).
const (
	dialEnv  = "QUESTBOX_TEST_DIAL"
	spawnEnv = "QUESTBOX_TEST_SPAWN"
)

func TestMain(m *testing.M) {
	if how := os.Getenv(spawnEnv); how != "" {
		os.Exit(spawn(how))
	}
	if sock := os.Getenv(dialEnv); sock != "" {
		if err := waitOrphaned(); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		resp, err := NewClient(SocketClient(sock), sock).hc.Get("http://questbox/api/quests")
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		var eb errorBody
		msg := "-"
		if resp.StatusCode != http.StatusOK && json.NewDecoder(resp.Body).Decode(&eb) == nil && eb.Error != nil {
			msg = eb.Error.Message
		}
		fmt.Printf("%d\n%s\n", resp.StatusCode, msg)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// parentEnv names the spawner's pid to a dialer, which waits for it to
// exit (and so for its own reparenting) before it dials.
const parentEnv = "QUESTBOX_TEST_PARENT"

// waitOrphaned waits, under parentEnv, until the spawner has exited: a
// pidfd is readable once the process has exited and its children have
// been handed to their new parent.
func waitOrphaned() error {
	v := os.Getenv(parentEnv)
	if v == "" {
		return nil
	}
	pid, err := strconv.Atoi(v)
	if err != nil {
		return err
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return nil // gone already
	}
	if err != nil {
		return fmt.Errorf("pidfd_open %d: %w", pid, err)
	}
	defer unix.Close(fd)
	for {
		_, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, -1)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// spawn is the test binary under spawnEnv: it starts itself as a dialer
// (the environment minus spawnEnv) the way how says, and does not wait
// for it: the dialer is reparented and prints on the inherited stdout.
func spawn(how string) int {
	self, err := os.Executable()
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	cmd := exec.Command(self)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	switch how {
	case "leader":
		cmd.Env = os.Environ()
		cmd.Env = append(cmd.Env, spawnEnv+"=orphan-in-session")
		if err := cmd.Run(); err != nil {
			fmt.Println("error:", err)
			return 1
		}
		io.Copy(io.Discard, os.Stdin)
		return 0
	case "orphan-in-session":
		// A process group of its own, in the leader's session.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	case "orphan":
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	case "orphan-newpid":
		uid, gid := os.Getuid(), os.Getgid()
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}}
	default:
		fmt.Println("error: unknown", spawnEnv, how)
		return 1
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, spawnEnv+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, parentEnv+"="+strconv.Itoa(os.Getpid()))
	if err := cmd.Start(); err != nil {
		fmt.Println("error:", err)
		return 1
	}
	return 0
}

// engines serves one engine on a store in a temporary directory and
// counts the requests that reached it.
type engines struct {
	eng   *engine.Engine
	calls atomic.Int64
}

func (e *engines) Engine(context.Context, bool) (*engine.Engine, error) {
	e.calls.Add(1)
	return e.eng, nil
}

func newEngines(t *testing.T) *engines {
	t.Helper()
	st, err := engine.OpenStore(t.TempDir(), engine.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(st, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		eng.Shutdown(0)
		st.Close()
	})
	return &engines{eng: eng}
}

// serve starts the API on a fresh socket in a directory others may enter.
func serve(t *testing.T, cfg SocketConfig) (sock string, e *engines) {
	t.Helper()
	dir, err := os.MkdirTemp("", "qbapi")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock = filepath.Join(dir, "questbox.sock")
	ln, err := ListenSocket(sock)
	if err != nil {
		t.Fatal(err)
	}
	e = newEngines(t)
	srv := ServeSocket(context.Background(), ln, New(Options{Engines: e, Config: config.Default(), Internal: true}), cfg)
	t.Cleanup(func() { srv.Close(time.Second) })
	return sock, e
}

func TestSocketMode(t *testing.T) {
	sock, _ := serve(t, SocketConfig{Policy: DefaultPeerPolicy()})
	fi, err := os.Stat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o660 || fi.Mode().Type() != os.ModeSocket {
		t.Errorf("socket mode %v, want a socket with 0660 (owner and group only)", fi.Mode())
	}
	if _, err := ListenSocket(sock); err == nil || !strings.Contains(err.Error(), "another questbox daemon") {
		t.Errorf("a second listen on a live socket: %v, want it refused", err)
	}
}

// TestSilentClientsHoldNoSlot: 1,000 connections that never send a byte
// are open while a client asks for the quest list; it is answered while
// every silent connection is still open (their header timeout is an hour
// here, so nothing was freed by a timeout), which fails if a silent client
// can hold a slot a request needs.
func TestSilentClientsHoldNoSlot(t *testing.T) {
	sock, e := serve(t, SocketConfig{Policy: DefaultPeerPolicy(), HeaderTimeout: time.Hour})
	const silent = 1000
	conns := make([]net.Conn, 0, silent)
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for range silent {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatalf("silent client %d: %v", len(conns), err)
		}
		conns = append(conns, c)
	}
	// Were a slot held by a silent client, this would wait for the hour.
	qs, err := NewClient(SocketClient(sock), sock).Quests(context.Background())
	if err != nil {
		t.Fatalf("quest list with %d silent clients connected: %v", silent, err)
	}
	if qs == nil || e.calls.Load() != 1 {
		t.Errorf("quest list: %v, %d engine calls; want an empty list from one call", qs, e.calls.Load())
	}
	// Every silent connection is still open: the answer did not wait for
	// any of them to go.
	for i, c := range conns {
		c.SetReadDeadline(time.Now().Add(time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); !isTimeout(err) {
			t.Fatalf("silent connection %d was closed (%v) before the answer", i, err)
		}
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// TestAnotherUIDIsRefused: a process of another user (not root, not the
// daemon's user, not in its group) gets 403, and no handler runs. The
// socket is opened to everyone here so that the kernel lets it connect:
// the peer check is what must refuse it.
func TestAnotherUIDIsRefused(t *testing.T) {
	if os.Getuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("this test starts a process as another user and needs root (CI runs as root)")
		}
		t.Skip("needs root to start a process as another user")
	}
	sock, e := serve(t, SocketConfig{Policy: PeerPolicy{UID: 0, GID: 0}})
	os.Chmod(sock, 0o666)
	os.Chmod(filepath.Dir(sock), 0o755)
	// The test binary, where user nobody may run it.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(filepath.Dir(sock), "api.test")
	raw, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, raw, 0o755); err != nil {
		t.Fatal(err)
	}
	// Each dialer is an orphan, not the test's child: a child of the
	// serving process would be refused as an agent's whatever its uid.
	run := func(uid, gid uint32) string {
		code, _ := dialVia(t, bin, sock, "orphan", &syscall.Credential{Uid: uid, Gid: gid})
		return code
	}
	if got := run(65534, 65534); got != fmt.Sprint(http.StatusForbidden) {
		t.Errorf("uid 65534 got %s, want 403", got)
	}
	if e.calls.Load() != 0 {
		t.Errorf("a refused peer reached the engine %d times", e.calls.Load())
	}
	if got := run(0, 0); got != "200" {
		t.Errorf("root got %s, want 200", got)
	}
	// A member of the socket's group is allowed.
	sock2, _ := serve(t, SocketConfig{Policy: PeerPolicy{UID: 0, GID: 65534}})
	os.Chmod(sock2, 0o666)
	os.Chmod(filepath.Dir(sock2), 0o755)
	if code, msg := dialVia(t, bin, sock2, "orphan", &syscall.Credential{Uid: 65534, Gid: 65534}); code != "200" {
		t.Errorf("a member of the socket's group got %s %s, want 200", code, msg)
	}
}

// dialVia runs the test binary bin as cred (nil: this user) so that it
// dials sock and returns the status code and the error's message it got.
// how is "child" (the test's own child) or a mode of spawnEnv. The
// orphans' output is read to its end, so dialVia returns once the dialer
// has exited, wherever it was reparented.
func dialVia(t *testing.T, bin, sock, how string, cred *syscall.Credential) (code, msg string) {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = []string{dialEnv + "=" + sock}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	var out []byte
	var err error
	switch how {
	case "child":
		out, err = cmd.CombinedOutput()
	case "leader":
		// It must live while its orphan dials: it waits for its stdin.
		cmd.Env = append(cmd.Env, spawnEnv+"="+how)
		cmd.SysProcAttr.Setsid = true
		stdin, perr := cmd.StdinPipe()
		if perr != nil {
			t.Fatal(perr)
		}
		stdout, perr := cmd.StdoutPipe()
		if perr != nil {
			t.Fatal(perr)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(stdout)
		for range 2 {
			line, rerr := r.ReadBytes('\n')
			out = append(out, line...)
			if rerr != nil {
				err = rerr
				break
			}
		}
		stdin.Close()
		if werr := cmd.Wait(); err == nil {
			err = werr
		}
	default:
		cmd.Env = append(cmd.Env, spawnEnv+"="+how)
		out, err = cmd.CombinedOutput()
	}
	if err != nil {
		t.Fatalf("dial %s: %v\n%s", how, err, out)
	}
	code, msg, _ = strings.Cut(strings.TrimSpace(string(out)), "\n")
	return code, msg
}

// TestConfinedPeersAreRefused: whatever its uid (here the daemon's own),
// a peer is refused with the confinement's message when it runs in a PID
// namespace nested in the daemon's, when the daemon started it, or when
// it was left in the process group or the session of a process the
// daemon started; another process of the same user is served.
func TestConfinedPeersAreRefused(t *testing.T) {
	sock, e := serve(t, SocketConfig{Policy: DefaultPeerPolicy()})
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ how, why string }{
		{"child", "was started by the daemon"},
		{"orphan-newpid", "runs in another PID namespace than the daemon's"},
		{"leader", "is in the session of pid"},
	} {
		code, msg := dialVia(t, bin, sock, c.how, nil)
		if code != "403" || !strings.HasPrefix(msg, ConfinedRefusal+" (pid ") || !strings.Contains(msg, c.why) {
			t.Errorf("%s: %s %q, want 403 %q naming why: %q", c.how, code, msg, ConfinedRefusal, c.why)
		}
	}
	if n := e.calls.Load(); n != 0 {
		t.Errorf("refused peers reached the engine %d times", n)
	}
	if code, msg := dialVia(t, bin, sock, "orphan", nil); code != "200" {
		t.Errorf("a process of the same user that the daemon did not start: %s %s, want 200", code, msg)
	}
}

// TestStaleSocketThatStillAcceptsIsReplaced: a socket whose listener is
// still open but serves nothing (a killed daemon's descriptor held for a
// moment by a child) accepts a connect; a new daemon must take it over
// instead of refusing to start.
func TestStaleSocketThatStillAcceptsIsReplaced(t *testing.T) {
	dir, err := os.MkdirTemp("", "qbapi")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "questbox.sock")
	stale, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	defer stale.Close() // never accepts: connects sit in the backlog
	ln, err := ListenSocket(sock)
	if err != nil {
		t.Fatalf("listen over a stale socket that still accepts: %v", err)
	}
	ln.Close()
}
