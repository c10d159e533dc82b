//go:build updatefault

package main

// A deliberately broken release, for the update tests only: built with
// -tags updatefault -ldflags "-X main.fault=STAGE", questbox fails at
// STAGE of its start-up. Release builds never have the tag.

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"

	"github.com/questbox/questbox/engine"
)

// fault names the stage at which this build breaks (see updateFault).
var fault string

// updateFault breaks at stage when fault names it:
//   - "start": exit 1 before anything is opened;
//   - "store": migrate the store to a schema no released questbox knows
//     (SchemaVersion+1), then exit 1;
//   - "ready": hang before READY (STATUS= says so, for the test's stand-in
//     for systemd's start timeout), until killed;
//   - "after-ready": panic just after READY.
func updateFault(stage, data string) {
	if stage != fault {
		return
	}
	switch stage {
	case "start":
		fmt.Fprintln(os.Stderr, "fault: exit at start")
		os.Exit(1)
	case "store":
		if err := migrateAway(data); err != nil {
			fmt.Fprintln(os.Stderr, "fault: migrate:", err)
		}
		fmt.Fprintln(os.Stderr, "fault: migrated the store, then crash")
		os.Exit(1)
	case "ready":
		_ = sdNotify(os.Getenv, "STATUS=fault: hanging before READY")
		select {}
	case "after-ready":
		panic("fault: panic after READY")
	}
}

func migrateAway(data string) error {
	db, err := bolt.Open(filepath.Join(data, engine.StoreFile), 0o600, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	return db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("meta"))
		if err != nil {
			return err
		}
		return b.Put([]byte("schema"), binary.BigEndian.AppendUint64(nil, engine.SchemaVersion+1))
	})
}
