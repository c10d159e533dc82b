package store

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// ErrClosed is returned when a transaction is asked of a store that was
// closed (it also wraps ErrStoreFailed).
var ErrClosed = berrors.ErrDatabaseNotOpen

// Instance is the identity of one open store: the transactions of one
// open share it (Tx.Instance), and it differs once the store is closed and
// opened again. It is comparable, and costs a pointer.
type Instance struct{ db *bolt.DB }

// Instance is the open store t is a transaction of.
func (t *Tx) Instance() Instance { return Instance{t.bolt().DB()} }

// CopyFile copies the store file src to dst as one read transaction
// (a consistent copy, whatever else reads it), synced and renamed into
// place, for a store no daemon has open. It waits up to 30s for a process
// that holds the store's lock; it changes nothing in src.
func CopyFile(src, dst string) error {
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
