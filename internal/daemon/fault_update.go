//go:build updatefault

package daemon

// A deliberately broken release, for the update tests only: built with
// -tags updatefault -ldflags "-X github.com/questbox/questbox/internal/daemon.fault=STAGE", questbox fails at
// STAGE of its start-up. Release builds never have the tag.

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/engine/storetest"
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

// migrateAway sets the store's schema version to one past this
// questbox's, as a migration of a later version would have left it
// (engine/storetest writes it; only the engine's packages open bbolt).
func migrateAway(data string) error {
	return storetest.SetSchema(filepath.Join(data, engine.StoreFile), engine.SchemaVersion+1)
}
