package store

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Damage to a key's length can read a bucket's name, or a record's key,
// back empty: bbolt names no bucket and stores no record so. The salvage
// writes everything else and says what it could not keep, rather than
// failing as a whole (TestRandomDamageNeverPanics found it by chance).
func TestSalvageWritesAroundNamelessBucketsAndKeys(t *testing.T) {
	got := &salvaged{root: newSBucket()}
	good := got.root.at([]string{"nodes"})
	good.keys["n1"] = []byte("one")
	got.root.at([]string{"runs"}).keys[""] = []byte("keyless")
	good.at([]string{""}).keys["x"] = []byte("in a nameless nested bucket")
	got.root.at([]string{""}).keys["y"] = []byte("in a nameless bucket")

	tmp := filepath.Join(t.TempDir(), "salvage.db")
	var rep SalvageReport
	noRebuild := func(*Tx, time.Time, func([]byte) bool) ([]string, error) { return nil, nil }
	if err := writeSalvage(tmp, got, time.Now(), &rep, noRebuild); err != nil {
		t.Fatalf("writeSalvage: %v", err)
	}
	if rep.Keys != 1 {
		t.Errorf("copied %d records, want 1 (n1)", rep.Keys)
	}
	lost := strings.Join(rep.Lost, "\n")
	if strings.Count(lost, "a bucket whose name was lost") != 2 || !strings.Contains(lost, "0-byte key") {
		t.Errorf("the report does not say what was lost:\n%s", lost)
	}
	db, err := bolt.Open(tmp, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("nodes"))
		if b == nil || string(b.Get([]byte("n1"))) != "one" {
			t.Errorf("the good record was not copied")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
