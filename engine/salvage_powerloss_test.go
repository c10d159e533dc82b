package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/engine/storetest"
)

// A card that lied about an fsync can lose the write of the root page
// (the page of top-level bucket headers) while keeping the meta page that
// names it. Every bucket's own pages are still in the file: salvage must
// find their records on every page of the file, not only through the
// tree, and must say that the root page was lost and that what it alone
// held cannot be known — never "lost: nothing".
func TestSalvageLostRootPage(t *testing.T) {
	base := buildStore(t)
	before, err := os.ReadFile(filepath.Join(base, StoreFile))
	if err != nil {
		t.Fatal(err)
	}
	// One more commit: it writes a new root page. Before it, a node of q2
	// grows into many children: edges enough for pages of their own.
	h := &harness{t: t, dir: base, clock: newFakeClock()}
	h.clock.Advance(24 * time.Hour) // after buildStore's commits, as a real clock would be
	h.open()
	var dirs []string
	for i := range 60 {
		dirs = append(dirs, fmt.Sprintf("direction %02d: %s", i, strings.Repeat("further ", 8)))
	}
	nodes, err := h.e.Nodes("q2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.e.Submit(context.Background(), "q2", nodes[0].ID, []byte(answer("promising", "worth growing, checked twice", dirs...))); err != nil {
		t.Fatal(err)
	}
	h.close()
	all := nodeRecords(t, base)
	before, err = os.ReadFile(filepath.Join(base, StoreFile))
	if err != nil {
		t.Fatal(err)
	}
	h.open()
	edges := map[string][]Edge{}
	for _, q := range []string{"q1", "q2"} {
		if edges[q], err = h.e.Edges(q); err != nil {
			t.Fatal(err)
		}
	}
	spec := h.e.NewQuestSpec("late", "one more commit")
	spec.Provider = ProviderExternal
	if _, err := h.e.NewQuest(spec); err != nil {
		t.Fatal(err)
	}
	h.close()

	for _, c := range []struct {
		name    string
		garbage bool
		damage  func(f *storetest.File) error
	}{
		{"garbage", true, func(f *storetest.File) error { return f.Garbage(f.Root()) }},
		{"the write lost (an older page, or zeros, left there)", false, func(f *storetest.File) error { return f.CopyPage(f.Root(), before) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copyStore(t, base)
			damageFile(t, dir, c.damage)
			if _, err := OpenStore(dir, StoreOptions{Check: true}); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("open: %v; want ErrCorrupt", err)
			}
			rep, err := Salvage(dir, time.Date(2026, 12, 3, 4, 5, 6, 0, time.UTC))
			if err != nil {
				t.Fatalf("salvage: %v", err)
			}
			lost := strings.Join(rep.Lost, "\n")
			// A lost write can leave an older root page in place, which
			// reads as a root: then only the pages it cannot reach tell.
			if !strings.Contains(lost, "cannot be known") || (c.garbage && !strings.Contains(lost, "root page")) {
				t.Errorf("lost = %q; want it to name the loss and say what cannot be known", rep.Lost)
			}
			got := nodeRecords(t, dir)
			if len(got) != len(all) {
				t.Errorf("recovered %d nodes, want all %d (their pages were not damaged)", len(got), len(all))
			}
			for seq, v := range all {
				if g := got[seq]; g != nil && string(g) != string(v) && !olderCopy(g, v) {
					t.Errorf("node #%d recovered with different bytes", seq)
				}
			}
			if rep.Verify != "ok" {
				t.Errorf("the salvaged store does not verify: %s", rep.Verify)
			}
			h := &harness{t: t, dir: dir, clock: newFakeClock()}
			h.open()
			defer h.close()
			for _, q := range []string{"q1", "q2"} {
				if _, err := h.e.Quest(q); err != nil {
					t.Errorf("quest %s after salvage: %v", q, err)
				}
				if got, err := h.e.Edges(q); err != nil || !reflect.DeepEqual(got, edges[q]) {
					t.Errorf("edges of %s after salvage: %v, %d edges, want %d", q, err, len(got), len(edges[q]))
				}
			}
		})
	}
}

// A store whose schema key was lost (its meta bucket is there, and so are
// its records) is damaged, not an old store: it must read as corrupt, with
// the salvage command, never as "needs an upgrade" — an upgrade would run
// every migration from schema 0 over it.
func TestLostSchemaKeyIsCorrupt(t *testing.T) {
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal })
	if _, err := h.e.Scan(q.ID, []string{"one", "two"}); err != nil {
		t.Fatal(err)
	}
	h.close()
	db, err := store.OpenBare(filepath.Join(h.dir, StoreFile), false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *store.Tx) error { return tx.Meta().Delete(kSchema) })
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, opt := range []StoreOptions{{ReadOnly: true}, {}, {Check: true}} {
		s, err := OpenStore(h.dir, opt)
		if err == nil {
			s.Close()
		}
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "schema") || !strings.Contains(err.Error(), "questbox salvage --data "+h.dir) {
			t.Errorf("open %+v: %v; want ErrCorrupt naming the lost schema version and the salvage command", opt, err)
		}
	}
	rep, err := Salvage(h.dir, time.Date(2026, 12, 3, 4, 5, 6, 0, time.UTC))
	if err != nil {
		t.Fatalf("salvage: %v", err)
	}
	if rep.Healthy || rep.Verify != "ok" {
		t.Errorf("salvage: healthy %v, verify %q; want salvaged and verified", rep.Healthy, rep.Verify)
	}
	h.open()
	if _, err := h.e.Quest(q.ID); err != nil {
		t.Errorf("quest after salvage: %v", err)
	}
}

// A lying card can leave, after a salvage's tree walk, a stale page's
// contents in buckets that hold records only: a nested bucket in the
// ledger, event records under ledger keys (under another seq, or under
// their own). rebuild drops them (the damaged file keeps them); the ledger
// verified "broken" before.
// And a locked node whose locking write was lost comes back in an older,
// pending version while the ledger says it locked: the loss is recorded
// (SALVAGED names the node), not left for verify to call tampering.
func TestRebuildAfterStalePages(t *testing.T) {
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal })
	res, err := h.e.Scan(q.ID, []string{"one", "two", "three"})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Added[1]
	var older []byte
	_ = h.store.view(func(tx *store.Tx) error {
		older = bytes.Clone(tx.Nodes().Get(u64(uint64(records.IDNumber(id, 'n')))))
		return nil
	})
	if _, err := h.e.AbortNode(id, "dead end"); err != nil {
		t.Fatal(err)
	}
	h.close()
	db, err := store.OpenBare(filepath.Join(h.dir, StoreFile), false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	err = db.Update(func(tx *store.Tx) error {
		lb := tx.Ledger()
		if _, err := lb.CreateBucket([]byte("stray")); err != nil {
			return err
		}
		if err := lb.Put(u64(999), tx.Events().Get(u64(1))); err != nil {
			return err
		}
		// An event under its own seq, past the ledger's last record: a
		// page of events read as the ledger's.
		ek, ev := tx.Events().Cursor().Last()
		if lk, _ := lb.Cursor().Last(); seqOf(ek) <= seqOf(lk) {
			return fmt.Errorf("the fixture has %d events, the ledger %d records", seqOf(ek), seqOf(lk))
		}
		if err := lb.Put(bytes.Clone(ek), bytes.Clone(ev)); err != nil {
			return err
		}
		if err := tx.Nodes().Put(u64(uint64(records.IDNumber(id, 'n'))), older); err != nil {
			return err
		}
		out, err = rebuild(tx, time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC), func([]byte) bool { return true })
		if err != nil {
			return err
		}
		return signAsSalvage(t, tx, h.dir) // as Salvage does after its rebuild
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatalf("rebuild: %v", err)
	}
	s, err := OpenStore(h.dir, StoreOptions{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rep, err := s.Verify()
	if err != nil {
		t.Fatalf("verify after rebuild: %v\nrebuild said %q", err, out)
	}
	if notes := strings.Join(rep.Notes, "; "); !strings.Contains(notes, id) {
		t.Errorf("the ledger's notes %q do not name node %s, whose locking write was lost", notes, id)
	}
}

// An index out of step with the nodes (a torn copy: an index page from
// an older or later commit beside node pages from another, found by
// TestPowerLossCopies in cmd/questbox: a locked node missing from the
// locked index; a node index naming a node that is not there, which made
// `quest show` fail on a store that verified) is store damage, which
// salvage repairs by rebuilding the indexes: verify calls it corrupt and
// names the salvage command, and salvage does not leave it alone as
// healthy.
func TestIndexOutOfStepIsDamage(t *testing.T) {
	for _, c := range []struct {
		name, named string
		damage      func(tx *store.Tx, quest string) error
	}{
		{"a locked node missing from the locked index", "locked index", func(tx *store.Tx, quest string) error {
			return tx.Locked().DeleteBucket([]byte(quest))
		}},
		{"the node index naming a missing node", "qnodes index", func(tx *store.Tx, quest string) error {
			return tx.QNodes().Bucket([]byte(quest)).Put(u64(118), []byte("n118"))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, Options{})
			q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal })
			res, err := h.e.Scan(q.ID, []string{"one", "two"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := h.e.AbortNode(res.Added[0], "dead end"); err != nil {
				t.Fatal(err)
			}
			h.close()
			db, err := store.OpenBare(filepath.Join(h.dir, StoreFile), false, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			err = db.Update(func(tx *store.Tx) error { return c.damage(tx, q.ID) })
			if cerr := db.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatal(err)
			}
			s, err := OpenStore(h.dir, StoreOptions{Check: true})
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Verify()
			s.Close()
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.named) || !strings.Contains(err.Error(), "questbox salvage --data "+h.dir) {
				t.Fatalf("verify: %v; want ErrCorrupt naming the %s and the salvage command", err, c.named)
			}
			rep, err := Salvage(h.dir, time.Date(2026, 12, 3, 4, 5, 6, 0, time.UTC))
			if err != nil || rep.Healthy || rep.Verify != "ok" {
				t.Fatalf("salvage: %v, healthy %v, verify %q; want it repaired and verified", err, rep.Healthy, rep.Verify)
			}
			h.open()
			if _, err := h.e.Nodes(q.ID); err != nil {
				t.Errorf("nodes after salvage: %v", err)
			}
		})
	}
}
