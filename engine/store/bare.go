package store

import (
	"time"

	bolt "go.etcd.io/bbolt"
)

// Bare is a store file opened as bbolt file and nothing more: no check of
// its pages, no migration, no lock of the store's own beyond bbolt's. It
// is for the tests and test tools that set a file up or damage it the way
// an older questbox, a power cut or a hand edit would have left it, and
// then see what Open makes of it. A daemon never opens one.
type Bare struct{ db *bolt.DB }

// OpenBare opens the bbolt file at path, read-only (a shared lock) or
// writable; it waits up to wait for another holder to let go (0: as long
// as it takes).
func OpenBare(path string, readOnly bool, wait time.Duration) (*Bare, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: readOnly, Timeout: wait})
	if err != nil {
		return nil, err
	}
	return &Bare{db: db}, nil
}

// Update runs fn in one write transaction.
func (b *Bare) Update(fn func(tx *Tx) error) error {
	return b.db.Update(func(tx *bolt.Tx) error { return fn(txOf(tx)) })
}

// View runs fn in one read transaction.
func (b *Bare) View(fn func(tx *Tx) error) error {
	return b.db.View(func(tx *bolt.Tx) error { return fn(txOf(tx)) })
}

// Close closes the file.
func (b *Bare) Close() error { return b.db.Close() }
