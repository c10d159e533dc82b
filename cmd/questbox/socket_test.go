package main

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/questbox/questbox/device"
	"github.com/questbox/questbox/device/box"
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
	data := shortDir(t)
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
	dev, err := device.Open(device.Config{Backend: device.BackendSim}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	d := &daemon{e: &env{getenv: getenv}, box: box.New(dev, box.Options{})}
	d.tickDone(engine.TickReport{}, errors.New("store: input/output error"))
	d.tickDone(engine.TickReport{}, nil)
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

// TestRunOnAFreshDataDirectory: `questbox run --data DIR` where DIR does
// not exist yet creates it, listens and takes commands.
func TestRunOnAFreshDataDirectory(t *testing.T) {
	data := filepath.Join(shortDir(t), "new", "box")
	d := startDaemon(t, data)
	must(t, 0, "", "quest", "new", "x", "--direction", "fresh", "--provider", "external", "--data", data)
	if fi, err := os.Stat(data); err != nil || fi.Mode().Perm() != 0o750 {
		t.Errorf("data directory: %v %v, want created with 0750", fi.Mode(), err)
	}
	if err := d.stop(); err != nil {
		t.Fatal(err)
	}
}
