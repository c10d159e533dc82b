package commit

import (
	"testing"

	"github.com/questbox/questbox/engine/store"
)

// noEvents is a shared event group that holds nothing: these tests write
// no events.
type noEvents struct{}

func (noEvents) Open(*store.Tx) {}
func (noEvents) Flush() error   { return nil }

// mustOpenStore opens a store of a one-migration schema (every bucket)
// in a temp dir, or in dir when it is set; its cleanup runs the
// integrity check on the file.
func mustOpenStore(t testing.TB, dir string) *Store {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	s, err := Open(dir, store.Options{Check: true}, store.Schema{Version: 1, Migrations: []func(*store.Tx) error{store.CreateBuckets}}, noEvents{})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	return s
}

// put writes value under key in the meta bucket.
func put(key, value string) func(*store.Tx) error {
	return func(tx *store.Tx) error { return tx.Meta().Put([]byte(key), []byte(value)) }
}
