package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/engine/storetest"
	"github.com/questbox/questbox/internal/daemon/daemontest"
	"github.com/questbox/questbox/ui/api"
)

// corruptionFixture is a store with a quest of 300 nodes, two of them
// locked, built through the CLI; its bytes are copied for each damage.
// It returns them and the data directory that holds the device key that
// signed its ledger.
func corruptionFixture(t *testing.T) ([]byte, string) {
	t.Helper()
	data := t.TempDir()
	must(t, 0, "", "quest", "new", "keep", "--direction", "survive damage", "--provider", "external", "--data", data)
	var hyps []string
	for i := range 300 {
		hyps = append(hyps, fmt.Sprintf("hypothesis number %d with some padding to fill pages", i))
	}
	must(t, 0, "", append([]string{"scan", "q1", "--data", data}, hyps...)...)
	must(t, 0, answer("dead", "the first hypothesis is a dead end, checked."), "submit", "q1", "--node", "n1", "--data", data)
	must(t, 0, answer("dead", "the second hypothesis is a dead end, checked."), "submit", "q1", "--node", "n2", "--data", data)
	raw, err := os.ReadFile(filepath.Join(data, engine.StoreFile))
	if err != nil {
		t.Fatal(err)
	}
	return raw, data
}

func damage(t *testing.T, path string, fn func(f *storetest.File) error) {
	t.Helper()
	f, err := storetest.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := fn(f); err != nil {
		t.Fatal(err)
	}
}

// TestCorruptionThroughTheCLI damages a store in each way a failing SD
// card, a power cut or a hand edit would, and checks what a user sees:
// no panic anywhere; `verify` exits 2 naming the damage; `run` holds with
// the reason on the LEDs and in `device status`; `salvage` recovers and
// its result verifies and takes new work.
func TestCorruptionThroughTheCLI(t *testing.T) {
	good, _ := corruptionFixture(t)
	truncate := func(size func(n int) int) func(t *testing.T, path string) {
		return func(t *testing.T, path string) {
			if err := os.Truncate(path, int64(size(len(good)))); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, path string)
		named  string // what verify's message names
		total  int    // nodes after salvage at least
	}{
		{"both meta pages", func(t *testing.T, path string) {
			damage(t, path, func(f *storetest.File) error {
				if err := f.GarbageMeta(0); err != nil {
					return err
				}
				return f.GarbageMeta(1)
			})
		}, "both meta pages are damaged", 200},
		{"zeroed freelist count", func(t *testing.T, path string) {
			damage(t, path, func(f *storetest.File) error { return f.ZeroFreelistCount() })
		}, "neither in use nor listed in the freelist", 300},
		{"garbage leaf page", func(t *testing.T, path string) {
			damage(t, path, func(f *storetest.File) error {
				leaf, err := f.LeafOf(storetest.Seq(150), "nodes")
				if err != nil {
					return err
				}
				return f.Garbage(leaf)
			})
		}, "garbage (its header is not a page header)", 280},
		{"garbage branch page", func(t *testing.T, path string) {
			damage(t, path, func(f *storetest.File) error {
				root, err := f.BucketRoot("nodes")
				if err != nil {
					return err
				}
				if !f.IsBranch(root) {
					return fmt.Errorf("the nodes bucket's root %d is not a branch", root)
				}
				return f.Garbage(root)
			})
		}, "bucket nodes: page", 200},
		{"cut in half", func(t *testing.T, path string) {
			// Half of the pages in use, not of the file: bbolt grows the
			// file ahead of its pages (up to twice what they take), so
			// the second half of a compact store can be free space alone,
			// and cutting it off loses nothing (verify then rightly
			// passes).
			var used int64
			damage(t, path, func(f *storetest.File) error {
				used = int64(f.HWM()) * int64(f.PageSize())
				return nil
			})
			if err := os.Truncate(path, used/2); err != nil {
				t.Fatal(err)
			}
		}, "the file is cut short", 1},
		{"cut to 0 bytes", truncate(func(int) int { return 0 }), "the file is empty (0 bytes); only a missing file is a new store", 0},
		{"locked node rewritten", func(t *testing.T, path string) {
			damage(t, path, func(f *storetest.File) error {
				return f.Rewrite(storetest.Seq(1), []byte("dead end, checked"), []byte("PASS ALL, checked"), "nodes")
			})
		}, "locked node n1 was rewritten", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := daemontest.ShortDir(t)
			path := filepath.Join(data, engine.StoreFile)
			if err := os.WriteFile(path, good, 0o600); err != nil {
				t.Fatal(err)
			}
			tc.damage(t, path)

			r := must(t, 2, "", "verify", "--data", data)
			if strings.Contains(r.stderr, "panic") || !strings.Contains(r.stderr, tc.named) {
				t.Errorf("verify said %q, want it to name %q", r.stderr, tc.named)
			}
			if tc.name == "locked node rewritten" {
				return // salvage does not undo a rewrite; verify keeps saying so
			}
			// The daemon holds with the reason instead of dying.
			d := startDaemon(t, data, "--gpio", "sim")
			// The socket answers while the daemon checks the store; it holds
			// once the check has failed (slow under qemu, as on a Pi).
			var v api.Device
			waitFor(t, "the daemon to hold", func() bool {
				v = deviceStatus(t, data)
				return v.State.Halted
			})
			if !v.State.Halted || !strings.Contains(v.Halted, "questbox salvage --data "+data) {
				t.Errorf("run on the damaged store: halted %v (%q), want halted naming salvage", v.State.Halted, v.Halted)
			}
			must(t, 2, "", "quest", "list", "--data", data)
			if err := d.stop(); err != nil && !strings.Contains(err.Error(), "corrupt") {
				t.Errorf("the held daemon stopped with %v", err)
			}

			r = must(t, 0, "", "salvage", "--data", data)
			if !strings.Contains(r.stdout, "corrupt store is kept as") {
				t.Errorf("salvage does not say where the damaged file went:\n%s", r.stdout)
			}
			must(t, 0, "", "verify", "--data", data)
			if tc.total == 0 {
				return // nothing was readable: an empty store, the loss reported
			}
			var st struct{ Total int }
			decode(t, must(t, 0, "", "status", "q1", "--json", "--data", data), &st)
			if st.Total < tc.total {
				t.Errorf("after salvage: %d nodes, want at least %d", st.Total, tc.total)
			}
			must(t, 0, "", "quest", "new", "after", "--direction", "salvage", "--provider", "external", "--data", data)
		})
	}
}

// TestOneGoodMetaPage: a store whose other meta page is garbage (a write
// cut short by a power loss) opens from the good one; the daemon repairs
// the damaged page and nothing is lost.
func TestOneGoodMetaPage(t *testing.T) {
	good, from := corruptionFixture(t)
	key, err := os.ReadFile(filepath.Join(from, engine.DeviceKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range []int{0, 1} {
		data := daemontest.ShortDir(t)
		path := filepath.Join(data, engine.StoreFile)
		if err := os.WriteFile(path, good, 0o600); err != nil {
			t.Fatal(err)
		}
		// The same box: its store and its key.
		if err := os.WriteFile(filepath.Join(data, engine.DeviceKeyFile), key, 0o600); err != nil {
			t.Fatal(err)
		}
		damage(t, path, func(f *storetest.File) error { return f.GarbageMeta(page) })
		r := qb(t, "", "verify", "--data", data)
		if strings.Contains(r.stderr, "panic") || (r.code != 0 && r.code != 2) {
			t.Fatalf("verify with meta page %d garbage: exit %d: %s", page, r.code, r.stderr)
		}
		d := startDaemon(t, data, "--gpio", "sim")
		var st struct{ Total int }
		decode(t, must(t, 0, "", "status", "q1", "--json", "--data", data), &st)
		if st.Total != 300 {
			t.Errorf("meta page %d garbage: %d nodes, want all 300", page, st.Total)
		}
		if err := d.stop(); err != nil {
			t.Fatal(err)
		}
		must(t, 0, "", "verify", "--data", data)
	}
}

// TestVerifyWhileTheDaemonWrites: verify in a loop against a daemon that
// ticks every 50 ms with the demo agent while another client keeps
// scanning: never a false report, never a crash.
func TestVerifyWhileTheDaemonWrites(t *testing.T) {
	data := daemontest.ShortDir(t)
	d := startDaemon(t, data, "--tick", "50ms", "--gpio", "sim")
	must(t, 0, "", "quest", "new", "busy", "--direction", "keep writing", "--provider", "demo", "--max-agent-runs", "100000", "--data", data)
	must(t, 0, "", "quest", "new", "ext", "--direction", "scanned", "--provider", "external", "--data", data)
	stop := make(chan struct{})
	done := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				done <- n
				return
			default:
			}
			qb(t, "", "scan", "q2", fmt.Sprintf("hypothesis %d", n), "--data", data)
			n++
		}
	}()
	// Verify until the daemon has committed several runs meanwhile (and at
	// least 25 times).
	runs := func() int {
		var st api.Status
		decode(t, must(t, 0, "", "status", "q1", "--json", "--data", data), &st)
		return st.Used.AgentRuns
	}
	i := 0
	waitFor(t, "five agent runs while verify loops", func() bool {
		if r := qb(t, "", "verify", "--data", data); r.code != 0 {
			t.Fatalf("verify %d while the daemon writes: exit %d: %s", i, r.code, r.stderr)
		}
		i++
		return i >= 25 && runs() >= 5
	})
	close(stop)
	if n := <-done; n == 0 {
		t.Error("no scan ran while verify looped")
	}
	if err := d.stop(); err != nil {
		t.Fatalf("the daemon stopped with %v", err)
	}
}
