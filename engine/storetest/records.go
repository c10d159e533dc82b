package storetest

import (
	"bytes"
	"fmt"
	"time"

	"github.com/questbox/questbox/engine/store"
)

// RewriteRecords replaces every record of the top-level bucket in the
// store file at path with what fn makes of it (nil: unchanged), in one
// transaction, as an older questbox's writes would have left them. No
// other process may have the file open.
func RewriteRecords(path, bucket string, fn func(k, v []byte) []byte) error {
	db, err := store.OpenBare(path, false, time.Second)
	if err != nil {
		return err
	}
	err = db.Update(func(tx *store.Tx) error {
		b := tx.Bucket([]byte(bucket))
		if b == nil {
			return fmt.Errorf("storetest: no bucket %s", bucket)
		}
		var ks, vs [][]byte
		err := b.ForEach(func(k, v []byte) error {
			if v == nil {
				return nil // a nested bucket
			}
			if nv := fn(k, v); nv != nil {
				ks, vs = append(ks, bytes.Clone(k)), append(vs, nv)
			}
			return nil
		})
		for i := range ks {
			if err == nil {
				err = b.Put(ks[i], vs[i])
			}
		}
		return err
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	return err
}

// MetaValue reads the key of the bucket "meta" of the store file at path
// (nil when it is not there), opening it read-only: it waits for a
// process that holds the file to release it.
func MetaValue(path, key string) ([]byte, error) {
	db, err := store.OpenBare(path, true, 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var v []byte
	err = db.View(func(tx *store.Tx) error {
		if m := tx.Bucket([]byte("meta")); m != nil {
			v = bytes.Clone(m.Get([]byte(key)))
		}
		return nil
	})
	return v, err
}
