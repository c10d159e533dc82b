package engine

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/questbox/questbox/engine/commit"
	"github.com/questbox/questbox/engine/store"
)

// RestoreReport says what Restore did (see store.RestoreReport).
type RestoreReport = store.RestoreReport

// BackupPrefix and BackupLayout name a backup made at a time:
// questbox-YYYYmmdd-HHMMSS.db (UTC), so that names sort by time (see
// engine/commit).
const (
	BackupPrefix = commit.BackupPrefix
	BackupLayout = commit.BackupLayout
)

// BackupName is the default name of a backup made at now.
func BackupName(now time.Time) string { return commit.BackupName(now) }

// Backup writes one consistent state of the store to w while the engine
// goes on (a bbolt read transaction; see store.DB.Backup); size, if not
// nil, is told the number of bytes first. It returns the bytes written.
func (e *Engine) Backup(w io.Writer, size func(n int64)) (int64, error) {
	return e.store.db.Backup(w, size)
}

// WriteBackup writes the backup file path atomically: fill writes the
// copy (Engine.Backup here, or a daemon's answer to the CLI) into a
// temporary file beside path, which is fsynced and verified as `questbox
// verify` does — every page, then the verdict ledger — before it is
// renamed into place. A copy that does not verify is removed and the
// error names why; path is then untouched.
func WriteBackup(path string, fill func(w io.Writer) error) (VerifyReport, error) {
	var rep VerifyReport
	err := store.WriteVerified(path, schema(), fill, func(db *store.DB) error {
		var err error
		rep, err = newStore(db).Verify()
		return err
	})
	return rep, err
}

// BackupTo is WriteBackup of this engine's store.
func (e *Engine) BackupTo(path string) (VerifyReport, error) {
	return WriteBackup(path, func(w io.Writer) error {
		_, err := e.Backup(w, nil)
		return err
	})
}

// Restore replaces the store in dir by the backup read from src (name
// names it in messages), keeping the
// store it replaces beside it as questbox.db.before-restore-<now>. It
// verifies a copy of src first — every page and the verdict ledger, after
// migrating an older schema in the copy — and refuses, changing nothing, a
// file that is corrupt (ErrCorrupt), whose ledger is broken
// (ErrLedgerBroken) or that a newer questbox wrote (ErrSchema). The store
// must not be open: a daemon closes its own first. See store.Restore.
//
// The restored store's ledger head is signed with dir's device key (made
// if there is none): the owner who restores a backup vouches for it, be
// it this box's, another box's or from before ledger signing. The report's
// notes say what its signature was. A backup does not hold the device key,
// which stays with the box (docs/ledger.md).
func Restore(dir string, src io.Reader, name string, now time.Time) (RestoreReport, error) {
	check, err := restoreCheck(dir)
	if err != nil {
		return RestoreReport{}, err
	}
	return store.Restore(dir, src, name, now, schema(), check)
}

// StagedRestore is a verified backup waiting in the data directory to
// replace the store (see StageRestore).
type StagedRestore = store.Staged

// StageRestore is the first half of Restore, safe while the store is open
// and written: the backup is copied into dir and verified (and migrated),
// or refused with ErrBackupRefused. Swap then replaces the store, once it
// is closed; Discard drops the copy.
func StageRestore(dir string, src io.Reader, name string) (*StagedRestore, error) {
	check, err := restoreCheck(dir)
	if err != nil {
		return nil, err
	}
	return store.StageRestore(dir, src, name, schema(), check)
}

// restoreCheck is a restore's check of the copy: Verify, then the copy's
// head signed with dir's device key (commit.RestoreCheck).
func restoreCheck(dir string) (func(db *store.DB) ([]string, error), error) {
	return commit.RestoreCheck(dir, SchemaVersion, func(db *store.DB) error {
		_, err := newStore(db).Verify()
		return err
	})
}

// PruneBackups removes the oldest of the backups named BackupName in dir
// until keep are left (keep <= 0 keeps them all), and returns the ones
// it removed.
func PruneBackups(dir string, keep int) ([]string, error) { return commit.PruneBackups(dir, keep) }

// ScheduledBackup writes a backup named BackupName(now) into dir (created
// if missing), verified, then prunes the backups there to keep.
func (e *Engine) ScheduledBackup(dir string, keep int, now time.Time) (string, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", fmt.Errorf("backup: %w", err)
	}
	path := filepath.Join(dir, BackupName(now))
	if _, err := e.BackupTo(path); err != nil {
		return "", err
	}
	_, err := PruneBackups(dir, keep)
	return path, err
}
