package main

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/internal/config"
	"github.com/questbox/questbox/internal/daemon/daemontest"
	"github.com/questbox/questbox/ui/api"
)

// TestHostileClientsDoNotBlockShutdown: a client that connects and never
// finishes its request, or never sends one, must neither block other
// commands nor keep the daemon from stopping.
func TestHostileClientsDoNotBlockShutdown(t *testing.T) {
	data := daemontest.ShortDir(t)
	d := startDaemon(t, data)
	sock := filepath.Join(data, "questbox.sock")
	partial, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer partial.Close()
	if _, err := partial.Write([]byte("POST /api/quests HTTP/1.1\r\nHost: q\r\nContent-Length: 100\r\n\r\n{\"name\"")); err != nil {
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

// TestSocketKeepsAFileThatIsNotASocket: a daemon.socket that names another
// file (the store, by mistake) is refused, and the file is left alone.
func TestSocketKeepsAFileThatIsNotASocket(t *testing.T) {
	data := daemontest.ShortDir(t)
	conf := filepath.Join(data, "questbox.toml")
	store := filepath.Join(data, "questbox.db")
	os.WriteFile(conf, []byte("[daemon]\nsocket = \""+store+"\"\n"), 0o644)
	os.WriteFile(store, []byte("precious"), 0o600)
	r := must(t, 2, "", "run", "--data", data, "--config", conf, "--gpio", "sim")
	if !strings.Contains(r.stderr, "is not a socket") {
		t.Errorf("stderr %q does not say the path is not a socket", r.stderr)
	}
	if b, _ := os.ReadFile(store); string(b) != "precious" {
		t.Errorf("the file at the socket path was changed to %q", b)
	}
}

// TestScanDashReadsStdin: `scan QUEST -` (README, usage) reads one
// hypothesis per line of stdin, directly and through the daemon, instead
// of seeding a node whose hypothesis is "-".
func TestScanDashReadsStdin(t *testing.T) {
	for _, viaDaemon := range []bool{false, true} {
		data := daemontest.ShortDir(t)
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

// TestRunOnAFreshDataDirectory: `questbox run --data DIR` where DIR does
// not exist yet creates it, listens and takes commands.
func TestRunOnAFreshDataDirectory(t *testing.T) {
	data := filepath.Join(daemontest.ShortDir(t), "new", "box")
	d := startDaemon(t, data)
	must(t, 0, "", "quest", "new", "x", "--direction", "fresh", "--provider", "external", "--data", data)
	if fi, err := os.Stat(data); err != nil || fi.Mode().Perm() != 0o750 {
		t.Errorf("data directory: %v %v, want created with 0750", fi.Mode(), err)
	}
	if err := d.stop(); err != nil {
		t.Fatal(err)
	}
}

// openEngine is api.Engines over one engine, as a daemon that has just
// opened its socket serves it.
type openEngine struct{ e *engine.Engine }

func (o openEngine) Engine(context.Context, bool) (*engine.Engine, error) { return o.e, nil }

// TestVerbWaitsForAStartingDaemon: a verb run while another process holds
// the store and no daemon answers yet (a daemon checking, compacting or
// migrating its store before it opens its socket) waits for the socket
// instead of failing with "store in use", and opens the store itself when
// the holder lets it go.
func TestVerbWaitsForAStartingDaemon(t *testing.T) {
	data := daemontest.ShortDir(t)
	sock := filepath.Join(data, "questbox.sock")
	must(t, 0, "", "quest", "new", "waits", "--direction", "a daemon starting", "--provider", "external", "--data", data)

	// The holder lets the store go: the verb opens it itself.
	runHeld := func(t *testing.T, release func(st *engine.Store)) result {
		st, err := engine.OpenStore(data, engine.StoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		waiting := make(chan struct{})
		doorWaitHook = func() { close(waiting) }
		defer func() { doorWaitHook = nil }()
		res := make(chan result, 1)
		go func() { res <- qb(t, "", "quest", "list", "--data", data) }()
		select {
		case r := <-res:
			t.Fatalf("quest list did not wait for the store's holder: exit %d\n%s", r.code, r.stderr)
		case <-waiting:
		}
		release(st)
		return <-res
	}
	r := runHeld(t, func(st *engine.Store) {
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	if r.code != 0 || !strings.Contains(r.stdout, "waits") {
		t.Errorf("after the holder closed the store: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}

	// The holder is a daemon that opens its socket, still holding the
	// store: the verb is served through the socket (opening the store
	// itself would fail, it is held).
	r = runHeld(t, func(st *engine.Store) {
		e, err := engine.New(st, engine.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ln, err := api.ListenSocket(sock)
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: api.New(api.Options{Engines: openEngine{e}, Config: config.Default(), Version: "test"})}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
	})
	if r.code != 0 || !strings.Contains(r.stdout, "waits") {
		t.Errorf("with a daemon answering on its socket: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}
