package storetest

import (
	"encoding/binary"
	"time"

	"github.com/questbox/questbox/engine/store"
)

// SetSchema writes schema version v into the store file at path, as a
// later questbox's migration would have left it (the version is the key
// "schema" of the bucket "meta"). No other process may have the file
// open. Tests of what an older questbox does with a newer store use it,
// and so does the deliberately broken release of cmd/questbox's update
// tests.
func SetSchema(path string, v uint64) error {
	db, err := store.OpenBare(path, false, time.Second)
	if err != nil {
		return err
	}
	err = db.Update(func(tx *store.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("meta"))
		if err != nil {
			return err
		}
		return b.Put([]byte("schema"), binary.BigEndian.AppendUint64(nil, v))
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	return err
}
