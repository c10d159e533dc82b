package store

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// testSchema is a schema of the store's buckets alone.
var testSchema = Schema{Version: 1, Migrations: []func(*Tx) error{CreateBuckets}}

// prunedStore makes a store with many free pages, as the outbox leaves
// after it is pruned of a burst of events: 12 MiB written and deleted in
// one bucket stand for the burst. It returns the data dir, closed.
func prunedStore(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	s, err := Open(dir, Options{}, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.Update(func(tx *Tx) error {
		b, err := tx.CreateBucket([]byte("burst"))
		if err != nil {
			return err
		}
		v := make([]byte, 3000)
		for i := range 4000 {
			if err := b.Put(binary.BigEndian.AppendUint64(nil, uint64(i)), v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(func(tx *Tx) error { return tx.DeleteBucket([]byte("burst")) }); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := s.ShouldCompact(); !ok {
		t.Fatal("the test store should call for a compaction")
	}
	return dir
}

// TestCompactionAndAWaitingOpen: an open that waited for the lock of the
// file a compaction replaced opens the new file, not the old one whose
// writes nobody would read again.
func TestCompactionAndAWaitingOpen(t *testing.T) {
	dir := prunedStore(t)
	a, err := Open(dir, Options{}, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan struct{})
	var once sync.Once
	lockWaitHook = func() { once.Do(func() { close(waiting) }) }
	t.Cleanup(func() { lockWaitHook = nil })
	type opened struct {
		s   *DB
		err error
	}
	b := make(chan opened, 1)
	go func() {
		s, err := Open(dir, Options{LockTimeout: 60e9}, testSchema)
		b <- opened{s, err}
	}()
	<-waiting // b holds the old file and waits for its lock
	tmp, err := a.compactTo()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, FileName)); err != nil {
		t.Fatal(err)
	}
	a.Close()
	got := <-b
	if got.err != nil {
		t.Fatal(got.err)
	}
	defer got.s.Close()
	held, _ := got.s.fd.Stat()
	now, _ := os.Stat(filepath.Join(dir, FileName))
	if !os.SameFile(held, now) {
		t.Error("the waiting open holds the replaced file")
	}
}
