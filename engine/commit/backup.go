package commit

import (
	"fmt"
	"os"
	"time"

	"github.com/questbox/questbox/engine/ledger"
	"github.com/questbox/questbox/engine/store"
)

// BackupPrefix and BackupLayout name a backup made at a time:
// questbox-YYYYmmdd-HHMMSS.db (UTC), so that names sort by time.
const (
	BackupPrefix = "questbox-"
	BackupLayout = "20060102-150405"
)

// BackupName is the default name of a backup made at now.
func BackupName(now time.Time) string {
	return BackupPrefix + now.UTC().Format(BackupLayout) + ".db"
}

// RestoreCheck is a restore's check of the copy: verify (the engine's
// Verify), then the copy's head signed with dir's device key
// (ledger.SignCopy); version is the schema the copy was migrated to.
func RestoreCheck(dir string, version uint64, verify func(db *store.DB) error) (func(db *store.DB) ([]string, error), error) {
	k, _, err := ledger.LoadOrCreateDeviceKey(dir)
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	return func(db *store.DB) ([]string, error) {
		if err := verify(db); err != nil {
			return nil, err
		}
		var note string
		err := db.Update(func(tx *store.Tx) error {
			was, _ := ledger.CheckSeal(tx, version, &ledger.Box{Key: k})
			var err error
			note, err = ledger.SignCopy(tx, k, was)
			return err
		})
		return []string{note}, err
	}, nil
}

// PruneBackups removes the oldest of the backups named BackupName in dir
// until keep are left (keep <= 0 keeps them all), and returns the ones
// it removed.
func PruneBackups(dir string, keep int) ([]string, error) {
	all, err := store.Backups(dir, BackupPrefix)
	if err != nil || keep <= 0 || len(all) <= keep {
		return nil, err
	}
	old := all[:len(all)-keep]
	for _, p := range old {
		if err := os.Remove(p); err != nil {
			return nil, fmt.Errorf("prune backups in %s: %w", dir, err)
		}
	}
	return old, nil
}
