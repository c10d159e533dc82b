package storetest

import (
	"encoding/binary"
	"time"

	bolt "go.etcd.io/bbolt"
)

// SetSchema writes schema version v into the store file at path, as a
// later questbox's migration would have left it (the version is the key
// "schema" of the bucket "meta"). No other process may have the file
// open. Tests of what an older questbox does with a newer store use it,
// and so does the deliberately broken release of cmd/questbox's update
// tests.
func SetSchema(path string, v uint64) error {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return err
	}
	err = db.Update(func(tx *bolt.Tx) error {
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
