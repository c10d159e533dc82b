package engine

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
)

// A lost write can leave a nested bucket where the quests or the nodes
// bucket holds records (a stale page read as a bucket). rebuild drops it as
// a record that does not decode; bolt's Delete refuses a bucket, and the
// whole salvage used to fail with "incompatible value" (found by
// TestPowerLossCopies in cmd/questbox, the lying-card copies).
func TestRebuildDropsNestedBucketsAmongRecords(t *testing.T) {
	q, _, db := closedStoreOfTwoNodes(t)
	err := db.Update(func(tx *store.Tx) error {
		if _, err := tx.Quests().CreateBucket([]byte("q99")); err != nil {
			return err
		}
		if _, err := tx.Nodes().CreateBucket(u64(99)); err != nil {
			return err
		}
		_, err := rebuild(tx, time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC), func([]byte) bool { return true })
		return err
	})
	if err != nil {
		t.Fatalf("rebuild with a nested bucket among the records: %v", err)
	}
	err = db.View(func(tx *store.Tx) error {
		if tx.Quests().Bucket([]byte("q99")) != nil || tx.Nodes().Bucket(u64(99)) != nil {
			t.Error("the nested buckets are still there")
		}
		if v := tx.Quests().Get([]byte(q.ID)); !strings.Contains(string(v), q.ID) {
			t.Errorf("quest %s lost: %q", q.ID, v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A flipped byte in a node record's "quest" name leaves valid JSON that
// names no quest. rebuild drops that node as a record that does not
// decode; it used to index it under a nested bucket of no name, which bbolt
// refuses, and the whole salvage failed with "bucket name required"
// (found by TestRandomDamageNeverPanics).
func TestRebuildDropsANodeOfNoQuest(t *testing.T) {
	_, res, db := closedStoreOfTwoNodes(t)
	damaged, kept := res.Added[0], res.Added[1]
	var notes []string
	err := db.Update(func(tx *store.Tx) error {
		nb := tx.Nodes()
		k := u64(records.NodeOrder(damaged))
		v := string(nb.Get(k))
		if !strings.Contains(v, `"quest":`) {
			t.Fatalf("node %s's record names no quest field: %s", damaged, v)
		}
		if err := nb.Put(k, []byte(strings.Replace(v, `"quest":`, `"quesx":`, 1))); err != nil {
			return err
		}
		var err error
		notes, err = rebuild(tx, time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC), func([]byte) bool { return true })
		return err
	})
	if err != nil {
		t.Fatalf("rebuild with a node of no quest: %v", err)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "names no quest") {
		t.Errorf("rebuild does not say why it dropped node %s: %q", damaged, notes)
	}
	err = db.View(func(tx *store.Tx) error {
		nb := tx.Nodes()
		if nb.Get(u64(records.NodeOrder(damaged))) != nil {
			t.Errorf("node %s of no quest is still there", damaged)
		}
		if nb.Get(u64(records.NodeOrder(kept))) == nil {
			t.Errorf("node %s was lost with it", kept)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// closedStoreOfTwoNodes is a store with a quest of two scanned nodes,
// closed by its engine and opened with bbolt alone, to be damaged.
func closedStoreOfTwoNodes(t *testing.T) (*Quest, ScanResult, *store.Bare) {
	t.Helper()
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal })
	res, err := h.e.Scan(q.ID, []string{"one", "two"})
	if err != nil {
		t.Fatal(err)
	}
	h.close()
	db, err := store.OpenBare(filepath.Join(h.dir, StoreFile), false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return q, res, db
}
