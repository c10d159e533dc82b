package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"os"

	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/questbox/questbox/engine"
)

// TestHostileClientsDoNotBlockShutdown: a client that connects and never
// finishes its request, or never sends one, must neither block other
// commands nor keep the daemon from stopping.
func TestHostileClientsDoNotBlockShutdown(t *testing.T) {
	data := shortDir(t)
	d := startDaemon(t, data)
	sock := filepath.Join(data, "questbox.sock")
	partial, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer partial.Close()
	if _, err := partial.Write([]byte(`{"args":["quest","list"`)); err != nil {
		t.Fatal(err)
	}
	silent, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()

	must(t, 0, "", "quest", "list", "--data", data)
	if err := d.stop(); err != nil {
		t.Fatalf("run returned %v\n%s", err, d.stderr.String())
	}
}

// testServer serves handle on a fresh socket with the given timeouts.
func testServer(t *testing.T, read, write time.Duration, handle func(context.Context, request) response) (*controlServer, string) {
	t.Helper()
	sock := filepath.Join(shortDir(t), "s.sock")
	ln, err := listenControl(context.Background(), sock)
	if err != nil {
		t.Fatal(err)
	}
	s := &controlServer{ln: ln, handle: handle, log: slog.New(slog.DiscardHandler), ctx: context.Background(),
		readTimeout: read, writeTimeout: write, reading: map[*net.UnixConn]struct{}{}}
	s.wg.Go(s.accept)
	return s, sock
}

// TestControlServerBoundsAStalledRequest: a request that never completes is
// answered with an error once its read deadline passes.
func TestControlServerBoundsAStalledRequest(t *testing.T) {
	s, sock := testServer(t, time.Millisecond, time.Minute, func(context.Context, request) response {
		t.Error("a partial request reached the handler")
		return response{}
	})
	defer func() { s.close(); s.wait() }()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte(`{"args":[`))
	var resp response
	if err := json.NewDecoder(c).Decode(&resp); err != nil {
		t.Fatalf("no answer to a stalled request: %v", err)
	}
	if resp.Code != exitUsage || !strings.Contains(string(resp.Stderr), "bad request") {
		t.Errorf("stalled request: code %d, stderr %q", resp.Code, resp.Stderr)
	}
}

// TestControlServerClientThatNeverReads: a client that sends its request
// but never reads the (large) answer does not hold the server forever.
func TestControlServerClientThatNeverReads(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 16<<20)
	s, sock := testServer(t, time.Minute, time.Millisecond, func(context.Context, request) response {
		return response{Stdout: big}
	})
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	json.NewEncoder(c).Encode(request{Args: []string{"quest", "list"}})
	c.(*net.UnixConn).CloseWrite()
	s.close()
	s.wait() // hangs without a write deadline
}

// TestListenControlKeepsAFileThatIsNotASocket: daemon.socket pointing at a
// regular file (a typo naming the store, say) must not delete it.
func TestListenControlKeepsAFileThatIsNotASocket(t *testing.T) {
	path := filepath.Join(shortDir(t), "questbox.db")
	if err := os.WriteFile(path, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := listenControl(context.Background(), path)
	if err == nil {
		ln.Close()
		t.Fatal("listenControl took over a regular file")
	}
	if b, rerr := os.ReadFile(path); rerr != nil || string(b) != "precious" {
		t.Fatalf("the file was removed or changed: %v %q", rerr, b)
	}
	if exitCode(err) != exitUsage {
		t.Errorf("exit code %d, want %d: %v", exitCode(err), exitUsage, err)
	}
}

// TestWatchdogOnlyAfterAHealthyTick: systemd's watchdog is fed after a tick
// that worked, never after a failed one, so a tick loop that keeps failing
// (a store that cannot be written) is restarted by systemd.
func TestWatchdogOnlyAfterAHealthyTick(t *testing.T) {
	notify := listenNotify(t, filepath.Join(shortDir(t), "notify"))
	getenv := func(k string) string {
		if k == "NOTIFY_SOCKET" {
			return notify.LocalAddr().String()
		}
		return ""
	}
	bx := &box{poke: make(chan struct{}, 1)}
	onTick := tickDone(bx, getenv, slog.New(slog.DiscardHandler))
	onTick(engine.TickReport{}, errors.New("store: input/output error"))
	onTick(engine.TickReport{}, nil)
	if got := readNotify(t, notify); got != "WATCHDOG=1" {
		t.Fatalf("systemd got %q, want WATCHDOG=1", got)
	}
	// Datagrams are queued by the time Write returns: anything else sent
	// is already there.
	notify.SetReadDeadline(time.Now())
	if n, err := notify.Read(make([]byte, 64)); err == nil {
		t.Errorf("the watchdog was fed twice (once after the failed tick): %d more bytes", n)
	}
}

// TestScanDashReadsStdin: `scan QUEST -` (README, usage) reads one
// hypothesis per line of stdin, directly and through the daemon, instead
// of seeding a node whose hypothesis is "-".
func TestScanDashReadsStdin(t *testing.T) {
	for _, viaDaemon := range []bool{false, true} {
		data := shortDir(t)
		if viaDaemon {
			startDaemon(t, data)
		}
		must(t, 0, "", "quest", "new", "s", "--direction", "stdin", "--provider", "external", "--data", data)
		var res struct{ Added, Skipped []string }
		decode(t, must(t, 0, "alpha\nbeta\n", "scan", "q1", "-", "--json", "--data", data), &res)
		if len(res.Added) != 2 {
			t.Fatalf("daemon %v: scan q1 - added %v, want 2 nodes", viaDaemon, res.Added)
		}
		v := showQuest(t, data, "q1")
		for _, n := range v.Nodes {
			if n.Hypothesis != "alpha" && n.Hypothesis != "beta" {
				t.Errorf("daemon %v: node %s has hypothesis %q", viaDaemon, n.ID, n.Hypothesis)
			}
		}
	}
}

// TestControlServerServesAtMostMaxConns: more clients than maxConns wait
// for a slot instead of each holding a request in memory at once; all are
// answered in the end.
func TestControlServerServesAtMostMaxConns(t *testing.T) {
	var (
		mu           sync.Mutex
		active, most int
	)
	release := make(chan struct{})
	s, sock := testServer(t, time.Minute, time.Minute, func(context.Context, request) response {
		mu.Lock()
		active++
		most = max(most, active)
		mu.Unlock()
		<-release
		mu.Lock()
		active--
		mu.Unlock()
		return response{Stdout: []byte("ok")}
	})
	defer func() { s.close(); s.wait() }()
	const clients = maxConns + 3
	answers := make(chan string, clients)
	for range clients {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		json.NewEncoder(c).Encode(request{Args: []string{"quest", "list"}})
		c.(*net.UnixConn).CloseWrite()
		go func() {
			var resp response
			json.NewDecoder(c).Decode(&resp)
			answers <- string(resp.Stdout)
		}()
	}
	waitFor(t, "maxConns handlers", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return active >= maxConns
	})
	close(release)
	for range clients {
		if got := <-answers; got != "ok" {
			t.Errorf("a client got %q", got)
		}
	}
	if most > maxConns {
		t.Errorf("%d requests were served at once, want at most %d", most, maxConns)
	}
}
