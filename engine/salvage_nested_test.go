package engine

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// A lost write can leave a nested bucket where the quests or the nodes
// bucket holds records (a stale page read as a bucket). rebuild drops it as
// a record that does not decode; bolt's Delete refuses a bucket, and the
// whole salvage used to fail with "incompatible value" (found by
// TestPowerLossCopies in cmd/questbox, the lying-card copies).
func TestRebuildDropsNestedBucketsAmongRecords(t *testing.T) {
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal })
	if _, err := h.e.Scan(q.ID, []string{"one", "two"}); err != nil {
		t.Fatal(err)
	}
	h.close()
	db, err := bolt.Open(filepath.Join(h.dir, StoreFile), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		if _, err := tx.Bucket(bQuests).CreateBucket([]byte("q99")); err != nil {
			return err
		}
		if _, err := tx.Bucket(bNodes).CreateBucket(u64(99)); err != nil {
			return err
		}
		_, err := rebuild(tx, time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC), func([]byte) bool { return true })
		return err
	})
	if err != nil {
		t.Fatalf("rebuild with a nested bucket among the records: %v", err)
	}
	err = db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bQuests).Bucket([]byte("q99")) != nil || tx.Bucket(bNodes).Bucket(u64(99)) != nil {
			t.Error("the nested buckets are still there")
		}
		if v := tx.Bucket(bQuests).Get([]byte(q.ID)); !strings.Contains(string(v), q.ID) {
			t.Errorf("quest %s lost: %q", q.ID, v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
