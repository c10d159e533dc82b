package store

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Backups and restores. A backup is one read transaction's state of the
// store written out whole by bbolt (Tx.WriteTo): a consistent copy taken
// while the engine goes on writing, since bbolt's readers never block its
// writer. Caveat (bbolt's): a commit that must grow bbolt's memory map
// waits until the read transaction ends, so a backup of a store that is
// growing may hold one commit back for as long as the copy takes.

// BackupTempPrefix names a copy being written, next to where it will be
// kept; it is renamed into place only once it verified.
const BackupTempPrefix = ".questbox-backup-"

// RestoredSuffix names the store a restore replaced: questbox.db is kept
// beside the restored one as questbox.db.before-restore-<UTC time>.
const RestoredSuffix = ".before-restore-"

// Backup writes one consistent state of the store to w, after telling
// size (may be nil) how many bytes it will write. It is safe while others
// write. It returns the bytes written.
func (s *DB) Backup(w io.Writer, size func(n int64)) (int64, error) {
	var n int64
	err := s.View(func(tx *Tx) error {
		if size != nil {
			size(tx.Size())
		}
		var err error
		n, err = tx.bolt().WriteTo(w)
		if err != nil {
			return fmt.Errorf("questbox store %s: write a backup: %w", s.path, err)
		}
		return nil
	})
	return n, err
}

// OpenFile opens the store file at path, which need not be called
// FileName: a backup, or a copy about to be restored. See Open.
func OpenFile(path string, opt Options, sch Schema) (*DB, error) {
	return openDB(filepath.Dir(path), path, opt, sch)
}

// WriteVerified writes the file path atomically: fill writes it into a
// temporary file in path's directory, which is fsynced, opened read-only
// with its full page check and given to check (nil: the page check only),
// and renamed over path only if both pass. On error nothing is left
// behind.
func WriteVerified(path string, sch Schema, fill func(w io.Writer) error, check func(db *DB) error) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, BackupTempPrefix+"*")
	if err != nil {
		return fmt.Errorf("backup %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := fill(f); err != nil {
		return fmt.Errorf("backup %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("backup %s: sync: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("backup %s: %w", path, err)
	}
	if err := verifyFile(tmp, sch, true, check); err != nil {
		return fmt.Errorf("backup %s: the copy does not verify, and was not kept: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("backup %s: %w", path, err)
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("backup %s: sync its directory: %w", path, err)
	}
	return nil
}

// verifyFile opens the store file at path with its full page check —
// read-only, or writable, which migrates an older schema — and runs check
// on it.
func verifyFile(path string, sch Schema, readOnly bool, check func(db *DB) error) error {
	db, err := OpenFile(path, Options{Check: true, ReadOnly: readOnly, LockTimeout: time.Second}, sch)
	if err != nil {
		return err
	}
	defer db.Close()
	if check != nil {
		return check(db)
	}
	return nil
}

// RestoreReport says what Restore did.
type RestoreReport struct {
	// Store is the store that now holds the restored copy.
	Store string `json:"store"`
	// Kept is where the store it replaced was kept ("" if there was none).
	Kept string `json:"kept,omitempty"`
	// Schema is the restored file's schema as it was, and Migrated
	// whether the restore brought it to this questbox's.
	Schema   uint64 `json:"schema"`
	Migrated bool   `json:"migrated,omitempty"`
	// Notes are what the check found and did worth knowing (the engine:
	// what the copy's ledger signature was, and that it signed it).
	Notes []string `json:"notes,omitempty"`
}

// Restore replaces the store in dir by the backup read from src (name
// names it in messages): StageRestore, then Swap. The store must not be
// open in this process. On error the store is as it was.
func Restore(dir string, src io.Reader, name string, now time.Time, sch Schema, check func(db *DB) ([]string, error)) (RestoreReport, error) {
	st, err := StageRestore(dir, src, name, sch, check)
	if err != nil {
		return RestoreReport{}, err
	}
	defer st.Discard()
	return st.Swap(now)
}

// Staged is a backup copied into the data directory and verified, ready
// to replace the store (Swap) or to be dropped (Discard).
type Staged struct {
	dir, name, tmp string
	rep            RestoreReport
}

// StageRestore copies the backup read from src into a temporary file in
// dir and checks the copy — its every page, its schema (a newer
// questbox's file is refused with ErrSchema), then check (the engine's
// ledger check, which may write to the copy and returns notes for the
// report) — after migrating an older schema in the copy; a backup file
// itself is never written. A copy that does not verify is removed
// and the error wraps ErrBackupRefused and the reason's sentinel. It is
// safe while the store is open and written: the daemon stages a restore
// before it stops its work.
func StageRestore(dir string, src io.Reader, name string, sch Schema, check func(db *DB) ([]string, error)) (*Staged, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("restore into %s: %w: %w", dir, ErrStoreFailed, err)
	}
	tmp, err := os.CreateTemp(dir, BackupTempPrefix+"*")
	if err != nil {
		return nil, fmt.Errorf("restore into %s: %w: %w", dir, ErrStoreFailed, err)
	}
	st := &Staged{dir: dir, name: name, tmp: tmp.Name()}
	st.rep.Store = filepath.Join(dir, FileName)
	_, err = io.Copy(tmp, src)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		st.Discard()
		return nil, fmt.Errorf("restore %s: copy it into %s: %w: %w", name, dir, ErrStoreFailed, err)
	}
	// A writable open migrates the copy; the schema as it was first.
	var was uint64
	err = verifyFile(st.tmp, sch, false, func(db *DB) error {
		was = db.migratedFrom
		if check == nil {
			return nil
		}
		var err error
		st.rep.Notes, err = check(db)
		return err
	})
	if err != nil {
		err = renamed(err, st.tmp, name)
		st.Discard()
		return nil, fmt.Errorf("restore %s: %w, nothing was changed: %w", name, ErrBackupRefused, err)
	}
	st.rep.Schema, st.rep.Migrated = was, was != sch.Version
	return st, nil
}

// Discard removes the staged copy unless Swap made it the store.
func (st *Staged) Discard() {
	if st.tmp != "" {
		os.Remove(st.tmp)
		st.tmp = ""
	}
}

// Swap makes the staged copy the store. Under the current store's
// exclusive lock (ErrInUse if another process holds it past a second),
// the store is hard-linked to questbox.db.before-restore-<now> and the
// copy renamed over questbox.db: at every moment questbox.db is one whole
// store, and an open waiting for the lock finds the new file (openLocked).
// The store must not be open in this process.
func (st *Staged) Swap(now time.Time) (rep RestoreReport, err error) {
	rep = st.rep
	path := rep.Store
	if st.tmp == "" {
		return rep, fmt.Errorf("BUG: restore %s: swapped twice or after Discard", st.name)
	}
	if cur, err := openLocked(st.dir, path, Options{LockTimeout: time.Second}); err == nil {
		defer cur.Close()
		rep.Kept = path + RestoredSuffix + now.UTC().Format("20060102T150405Z")
		if err := os.Link(path, rep.Kept); err != nil {
			return rep, fmt.Errorf("restore %s: keep the current store: %w: %w", st.name, ErrStoreFailed, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return rep, err
	}
	if err := os.Rename(st.tmp, path); err != nil {
		if rep.Kept != "" {
			os.Remove(rep.Kept)
		}
		return rep, fmt.Errorf("restore %s: %w: %w", st.name, ErrStoreFailed, err)
	}
	st.tmp = ""
	if err := syncDir(st.dir); err != nil {
		return rep, fmt.Errorf("restore %s: sync %s: %w: %w", st.name, st.dir, ErrStoreFailed, err)
	}
	return rep, nil
}

// renamed is err with the temporary copy's name replaced by the file the
// owner named, and the store-repair advice (which is about the live
// store, not about a backup) left out. errors.Is sees err's sentinels.
func renamed(err error, tmp, src string) error {
	msg := strings.ReplaceAll(err.Error(), tmp, src)
	if i := strings.Index(msg, ": questbox refuses to run on it"); i >= 0 && errors.Is(err, ErrCorrupt) {
		msg = msg[:i] + ": " + ErrCorrupt.Error()
	}
	if msg == err.Error() {
		return err
	}
	return &wrapped{msg: msg, err: err}
}

// wrapped is an error with its message reworded.
type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string { return w.msg }
func (w *wrapped) Unwrap() error { return w.err }

// Backups lists the backups in dir named by prefix, oldest first (their
// names sort by time).
func Backups(dir, prefix string) ([]string, error) {
	m, err := filepath.Glob(filepath.Join(dir, prefix+"*.db"))
	if err != nil {
		return nil, err
	}
	slices.Sort(m)
	return m, nil
}

// staleRestoreAge is how old a restore's staged copy in the data
// directory must be for an open to take it for one a crash left behind.
// A restore under way (minutes at most) is never that old.
const staleRestoreAge = 24 * time.Hour

// removeStaleRestores removes staged copies of restores (BackupTempPrefix
// files in the data directory) that a crash left behind.
func removeStaleRestores(dir string, now time.Time) {
	stale, _ := filepath.Glob(filepath.Join(dir, BackupTempPrefix+"*"))
	for _, p := range stale {
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && now.Sub(fi.ModTime()) > staleRestoreAge {
			os.Remove(p)
		}
	}
}
