package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

// SnapshotStore copies the store file src to dst as one read transaction
// (a consistent copy, whatever else reads it), synced and renamed into
// place. It is for a store no daemon has open: `questbox run` takes a
// snapshot before a release on trial may migrate the store (package
// update), and puts it back if that release fails. It waits up to 30s for
// a process that holds the store's lock; it changes nothing in src.
func SnapshotStore(src, dst string) error {
	db, err := bolt.Open(src, 0o600, &bolt.Options{ReadOnly: true, Timeout: 30 * time.Second})
	if err != nil {
		return fmt.Errorf("snapshot of %s: %w", src, err)
	}
	defer db.Close()
	tmp := dst + ".tmp"
	if err := db.View(func(tx *bolt.Tx) error { return tx.CopyFile(tmp, 0o600) }); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("snapshot of %s: %w", src, err)
	}
	f, err := os.Open(tmp)
	if err == nil {
		err = f.Sync()
		f.Close()
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err == nil {
		var d *os.File
		if d, err = os.Open(filepath.Dir(dst)); err == nil {
			err = d.Sync()
			d.Close()
		}
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("snapshot of %s: %w", src, err)
	}
	return nil
}
