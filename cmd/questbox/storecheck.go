package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/questbox/questbox/engine"
)

// preflight reads every page of the store in dir — each bucket and key,
// nested buckets included — before the engine opens it with its full
// check. bbolt's Tx.Check runs in a goroutine of its own, where an assertion
// on a garbage page crashes the process instead of returning an error; a
// cursor walk in this goroutine, under recover(), turns the same damage
// into ErrCorrupt with the salvage command. A missing or unopenable file is
// left to engine.OpenStore, which classifies it.
func preflight(dir string) error {
	path := filepath.Join(dir, engine.StoreFile)
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	db, err := openReadOnly(path)
	if errors.Is(err, berrors.ErrTimeout) {
		return fmt.Errorf("questbox store %s is in use by another process (is `questbox run` running? the CLI reaches a running daemon through its control socket): %w", dir, engine.ErrInUse)
	}
	if err != nil {
		return nil
	}
	defer db.Close()
	var bad error
	salvaged(func() {
		bad = db.View(func(tx *bolt.Tx) error {
			c := tx.Cursor()
			for k, _ := c.First(); k != nil; k, _ = c.Next() {
				if b := tx.Bucket(k); b != nil {
					walk(b)
				}
			}
			return nil
		})
	}, func(p any) { bad = fmt.Errorf("%v", p) })
	if bad != nil {
		return fmt.Errorf("questbox store %s is corrupt (%v): questbox refuses to run on it; move it aside and recover what is readable with `questbox salvage --data %s`: %w", path, bad, dir, engine.ErrCorrupt)
	}
	return nil
}

// walk reads every key and value of b and its nested buckets.
func walk(b *bolt.Bucket) {
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v == nil {
			if sb := b.Bucket(k); sb != nil {
				walk(sb)
			}
		}
	}
}

func openReadOnly(path string) (db *bolt.DB, err error) {
	defer func() {
		if p := recover(); p != nil {
			db, err = nil, fmt.Errorf("open panicked: %v", p)
		}
	}()
	return bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 3 * time.Second})
}

// openChecked opens the store with its full integrity check, after the
// preflight walk.
func openChecked(dir string) (*engine.Store, error) {
	if err := preflight(dir); err != nil {
		return nil, err
	}
	return engine.OpenStore(dir, engine.StoreOptions{Check: true})
}
