package api

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/questbox/questbox/config"
	"github.com/questbox/questbox/engine"
)

// dialEnv makes the test binary, run as another user, dial the socket it
// names, ask /api/quests and print the status code (see TestMain).
const dialEnv = "QUESTBOX_TEST_DIAL"

func TestMain(m *testing.M) {
	if sock := os.Getenv(dialEnv); sock != "" {
		resp, err := NewClient(SocketClient(sock), sock).hc.Get("http://questbox/api/quests")
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println(resp.StatusCode)
		os.Exit(0)
	}
	os.Exit(m.Run())
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
	run := func(uid, gid uint32) string {
		cmd := exec.Command(bin)
		cmd.Env = []string{dialEnv + "=" + sock}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("dial as uid %d: %v\n%s", uid, err, out)
		}
		return strings.TrimSpace(string(out))
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
	os.WriteFile(filepath.Join(filepath.Dir(sock2), "api.test"), raw, 0o755)
	cmd := exec.Command(filepath.Join(filepath.Dir(sock2), "api.test"))
	cmd.Env = []string{dialEnv + "=" + sock2}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "200" {
		t.Errorf("a member of the socket's group got %q (%v), want 200", out, err)
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
