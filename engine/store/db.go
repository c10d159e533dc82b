package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/questbox/questbox/engine/internal/boltfile"
)

// FileName is the name of the bbolt file inside the data directory.
const FileName = "questbox.db"

// Schema is what the domain above the store says of its records: the
// version this build writes and the migrations that bring an older file
// to it (Migrations[i] upgrades schema i to i+1; Migrations[0], from an
// empty file, is CreateBuckets).
type Schema struct {
	Version    uint64
	Migrations []func(tx *Tx) error
	// ReadAsIs says whether a read-only open, which writes nothing, may
	// read a store of the older schema v as it is, and what to note when
	// it does; a store it may not is refused with ErrReadOnly (it needs
	// an upgrade first).
	ReadAsIs func(v uint64) (note string, ok bool)
}

// Options tune Open.
type Options struct {
	// LockTimeout bounds the wait for another process's lock. Default 3s.
	LockTimeout time.Duration
	// Check walks every page of the file at open (see DB.Check). The
	// daemon, verify and salvage set it. Without it an open still checks
	// what bbolt reads blindly at open — the meta pages, the file's
	// length, the freelist and the root page — so no open ever faults.
	Check bool
	// ReadOnly opens the file read-only under a shared lock: any number of
	// read-only opens at once, no writer meanwhile, and nothing written —
	// no migration, no repair, no recovery. Every write returns
	// ErrReadOnly. A store of schema 1 is read as it is (only its ledger
	// lacks node hashes, which Verify then says); a store that needs
	// buckets created is refused with ErrReadOnly.
	ReadOnly bool
	// Compact rewrites the file without its free pages at open when they
	// are many (compact.go). The daemon sets it.
	Compact bool

	replaced int // openLocked: how often the file was replaced under it
}

// DB is the bbolt file on the SD card. It is safe for concurrent use.
type DB struct {
	db *bolt.DB
	// fd is the file bbolt opened (through openDB's hook); bbolt
	// closes it.
	fd       *os.File
	dir      string
	path     string
	readOnly bool
	// want is the schema this build writes.
	want Schema
	// schema is the file's schema version: SchemaVersion, or an older one
	// a read-only open reads as it is.
	schema uint64
	// migratedFrom is the file's schema version as the open found it.
	migratedFrom uint64
	// created says that this open created the file (createStore).
	created bool
	// notes are what the open found and did that the owner should know
	// (a damaged meta page and its repair, an old schema read as is).
	notes []string
	// commits counts write transactions committed; each is one bbolt
	// commit (data pages, then meta page, each followed by fdatasync).
	commits atomic.Uint64
	// grows counts commits that grew the file: bbolt then truncates it
	// to the new size and fsyncs it once more before the data pages.
	grows atomic.Uint64
	// size is the file's size after the last commit (for grows).
	size atomic.Int64
}

// Open opens the store in dir, creating it only where no file exists:
// an existing file that is empty, cut short or damaged is corrupt, never a
// new store. A new store is built in a temporary file and linked into
// place, so a crash while creating it never leaves an empty questbox.db.
//
// A store whose one meta page is damaged while the other is good opens
// from the good one, as bbolt does after a commit cut short by a power
// loss; a writable open rewrites the damaged page at once (one commit) and
// Notes says so. A writable open migrates an older schema forward.
//
// Errors: ErrInUse when another process holds the file past the lock
// timeout; ErrCorrupt when the file fails its checks — the message names
// the damage and the salvage command; ErrSchema when a newer questbox
// wrote it; ErrReadOnly when a read-only open finds a store that needs an
// upgrade first; ErrStoreFailed when the file or its directory cannot be
// read or created (permission denied, an I/O error, a read-only file
// system). A read-only open of a missing store returns ErrNoStore (and
// fs.ErrNotExist).
func Open(dir string, opt Options, sch Schema) (*DB, error) {
	return openDB(dir, filepath.Join(dir, FileName), opt, sch)
}

func openDB(dir, path string, opt Options, sch Schema) (*DB, error) {
	created := false
	if opt.LockTimeout <= 0 {
		opt.LockTimeout = 3 * time.Second
	}
	if !opt.ReadOnly {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, fmt.Errorf("questbox store %s: %w: %w", dir, ErrStoreFailed, err)
		}
		var err error
		if created, err = createStore(dir, path, sch); err != nil {
			return nil, err
		}
	}
	// bbolt opens the file through this hook: it is opened and locked
	// here, and checked before bbolt reads or maps any of it.
	var (
		held *os.File
		fc   fileCheck
	)
	hook := func(string, int, os.FileMode) (*os.File, error) {
		f, err := openLocked(dir, path, opt)
		if err != nil {
			return nil, err
		}
		if fc, err = inspect(dir, path, f, opt.Check); err != nil {
			f.Close()
			return nil, err
		}
		held = f
		return f, nil
	}
	db, err := openBolt(path, &bolt.Options{Timeout: opt.LockTimeout, ReadOnly: opt.ReadOnly, FreelistType: freelistType, OpenFile: hook},
		func() {
			if held != nil {
				held.Close()
			}
		})
	if err != nil {
		switch {
		case errors.Is(err, ErrInUse), errors.Is(err, ErrCorrupt), errors.Is(err, ErrStoreFailed), errors.Is(err, fs.ErrNotExist):
			return nil, err
		case errors.Is(err, berrors.ErrTimeout):
			return nil, inUse(dir)
		case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrChecksum), errors.Is(err, berrors.ErrVersionMismatch):
			return nil, corrupt(dir, path, err.Error())
		}
		return nil, fmt.Errorf("questbox store %s: %w: %w", path, ErrStoreFailed, err)
	}
	s := &DB{db: db, fd: held, dir: dir, path: path, readOnly: opt.ReadOnly, notes: fc.notes, want: sch, created: created}
	if held != nil {
		if fi, err := held.Stat(); err == nil {
			s.size.Store(fi.Size())
		}
	}
	if fc.damagedMeta >= 0 && !opt.ReadOnly {
		if err := s.repairMeta(fc); err != nil {
			db.Close()
			return nil, err
		}
	}
	if err := s.migrate(); err != nil {
		db.Close()
		return nil, err
	}
	if opt.Compact && !opt.ReadOnly {
		// Under the exclusive lock: no other process is compacting.
		removeStaleCompactions(dir)
		removeStaleRestores(dir, time.Now())
		// The copy was checked page by page before it replaced the
		// file: the reopen needs no second full walk.
		again := opt
		again.Compact, again.Check = false, false
		return s.compact(func() (*DB, error) { return openDB(dir, path, again, sch) })
	}
	return s, nil
}

// createStore creates a new, empty store at path unless a file is there:
// bbolt initialises it in a temporary file, the buckets are created, and
// the file is hard-linked into place (which fails if another process
// created one meanwhile: then that one is used). It reports whether it
// linked the file it made.
func createStore(dir, path string, sch Schema) (bool, error) {
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		return false, nil // there is a file (or an error the open will report)
	}
	tmp, err := os.CreateTemp(dir, FileName+".new-*")
	if err != nil {
		return false, fmt.Errorf("questbox store %s: create: %w: %w", path, ErrStoreFailed, err)
	}
	name := tmp.Name()
	tmp.Close()
	defer os.Remove(name)
	db, err := bolt.Open(name, 0o600, &bolt.Options{Timeout: time.Second, FreelistType: freelistType})
	if err != nil {
		return false, fmt.Errorf("questbox store %s: create: %w: %w", path, ErrStoreFailed, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, m := range sch.Migrations {
			err := ErrMigrationContinues
			for errors.Is(err, ErrMigrationContinues) {
				err = m(txOf(tx)) // an empty file: every part in this one commit
			}
			if err != nil {
				return err
			}
		}
		return tx.Bucket(Meta).Put(KeySchema, U64(sch.Version))
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, fmt.Errorf("questbox store %s: create: %w: %w", path, ErrStoreFailed, err)
	}
	err = os.Link(name, path)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return false, fmt.Errorf("questbox store %s: create (the data directory must support hard links): %w: %w", path, ErrStoreFailed, err)
	}
	if err := syncDir(dir); err != nil {
		return false, fmt.Errorf("questbox store %s: create: sync %s: %w: %w", path, dir, ErrStoreFailed, err)
	}
	return err == nil, nil
}

// openLocked opens the existing store file and takes its lock: exclusive
// for a writer, shared for a read-only open.
func openLocked(dir, path string, opt Options) (*os.File, error) {
	flag := os.O_RDWR
	if opt.ReadOnly {
		flag = os.O_RDONLY
	}
	f, err := os.OpenFile(path, flag, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("questbox store %s does not exist yet (`questbox run` or a writing command creates it): %w: %w", path, ErrNoStore, err)
	}
	if err != nil {
		return nil, fmt.Errorf("questbox store %s: %w: %w", path, ErrStoreFailed, err)
	}
	if err := lockFile(f, !opt.ReadOnly, opt.LockTimeout); err != nil {
		f.Close()
		if errors.Is(err, errLockTimeout) {
			return nil, inUse(dir)
		}
		return nil, fmt.Errorf("questbox store %s: lock: %w: %w", path, ErrStoreFailed, err)
	}
	// A compaction (compact.go) renames a new file over the path while
	// others may wait for the old one's lock: the lock is only good if
	// the path still names the file it is on.
	held, err1 := f.Stat()
	now, err2 := os.Stat(path)
	if err1 == nil && err2 == nil && !os.SameFile(held, now) {
		f.Close()
		if opt.replaced >= 3 {
			return nil, fmt.Errorf("questbox store %s: the file was replaced %d times while this open waited: %w", path, opt.replaced, ErrStoreFailed)
		}
		opt.replaced++
		return openLocked(dir, path, opt)
	}
	return f, nil
}

var errLockTimeout = errors.New("lock timeout")

// lockWaitHook, when set (by a test), is called each time lockFile finds
// the lock taken and will try again.
var lockWaitHook func()

func inUse(dir string) error {
	return fmt.Errorf("questbox store %s is in use by another process (is `questbox run` running? the CLI reaches a running daemon through its control socket): %w", dir, ErrInUse)
}

// inspect checks the locked file f before bbolt reads it: the whole page
// tree when full is set, else what bbolt reads at open.
func inspect(dir, path string, f *os.File, full bool) (fileCheck, error) {
	fi, err := f.Stat()
	if err != nil {
		return fileCheck{}, fmt.Errorf("questbox store %s: %w: %w", path, ErrStoreFailed, err)
	}
	if fi.Size() == 0 {
		return fileCheck{}, corrupt(dir, path, "the file is empty (0 bytes); only a missing file is a new store")
	}
	bf, err := boltfile.Open(f, fi.Size())
	if err != nil {
		return fileCheck{}, corrupt(dir, path, err.Error())
	}
	check := checkQuick
	if full {
		check = checkFile
	}
	c, err := check(bf)
	if err != nil {
		return c, corrupt(dir, path, err.Error())
	}
	if len(c.problems) > 0 {
		return c, corrupt(dir, path, c.problems...)
	}
	return c, nil
}

// Corrupt is ErrCorrupt for the store in dir at path, naming every
// problem found and the salvage command.
func Corrupt(dir, path string, problems ...string) error { return corrupt(dir, path, problems...) }

// corrupt is ErrCorrupt for the store at path, naming every problem found
// and the salvage command.
func corrupt(dir, path string, problems ...string) error {
	return fmt.Errorf("questbox store %s is corrupt (%s): questbox refuses to run on it; move it aside and recover what is readable with `questbox salvage --data %s`: %w", path, strings.Join(problems, "; "), dir, ErrCorrupt)
}

// repairMeta rewrites the damaged meta page of a store opened from its
// other one: bbolt writes the meta page of transaction t to page t%2, so
// the next commit lands on the damaged page.
func (s *DB) repairMeta(fc fileCheck) error {
	if err := s.Update(func(*Tx) error { return nil }); err != nil {
		return fmt.Errorf("questbox store %s: rewrite damaged meta page %d: %w", s.path, fc.damagedMeta, err)
	}
	what := "has been rewritten"
	bf, err := s.file()
	if err != nil {
		return err
	}
	if bf.MetaErr[fc.damagedMeta] != nil {
		what = "could not be rewritten: " + bf.MetaErr[fc.damagedMeta].Error()
	}
	s.notes = []string{fmt.Sprintf("meta page %d was damaged (%v); the store was opened from meta page %d, and the damaged page %s", fc.damagedMeta, fc.metaErr, fc.metaPage, what)}
	return nil
}

// file returns the store's file for boltfile reads. It reads through the
// very descriptor bbolt uses (with pread, which moves no file offset).
func (s *DB) file() (*boltfile.File, error) {
	fi, err := s.fd.Stat()
	if err != nil {
		return nil, fmt.Errorf("questbox store %s: %w: %w", s.path, ErrStoreFailed, err)
	}
	bf, err := boltfile.Open(s.fd, fi.Size())
	if err != nil {
		return nil, corrupt(s.dir, s.path, err.Error())
	}
	return bf, nil
}

// Notes says what the open found and did that the owner should know: a
// damaged meta page and its repair, an old schema read as it is.
func (s *DB) Notes() []string { return slices.Clone(s.notes) }

// ReadOnly reports whether the store was opened read-only.
func (s *DB) ReadOnly() bool { return s.readOnly }

// schemaState reads the file's schema version and whether every bucket
// of that schema exists (AddedIn).
func (s *DB) schemaState() (v uint64, complete, migrating bool, err error) {
	err = s.View(func(tx *Tx) error {
		if m := tx.Bucket(Meta); m != nil {
			if b := m.Get(KeySchema); len(b) == 8 {
				v = binary.BigEndian.Uint64(b)
			} else if b != nil {
				return corrupt(s.dir, s.path, fmt.Sprintf("the schema key has %d bytes", len(b)))
			}
			if b := m.Get(KeyMigrating); b != nil {
				// A migration that commits in parts stopped between
				// two: the store is at the start of that one.
				if len(b) != 8 || binary.BigEndian.Uint64(b) >= v {
					return corrupt(s.dir, s.path, fmt.Sprintf("the unfinished migration's key (%x) is not a schema before v%d", b, v))
				}
				v, migrating = binary.BigEndian.Uint64(b), true
			}
		}
		complete = !migrating
		for _, b := range Buckets {
			if tx.Bucket(b) == nil && v >= AddedIn[string(b)] {
				complete = false
			}
		}
		if v == 0 {
			// Every questbox writes its schema version with its first
			// buckets, in the commit that creates the file (createStore):
			// a file without it lost the key or the root page that held
			// it (a lost page write), and is never an old store to
			// migrate from nothing.
			return corrupt(s.dir, s.path, "the schema version (meta/schema) is missing: it, or the root page that held it, was lost")
		}
		return nil
	})
	return v, complete, migrating, err
}

// readAsIs reads the older schema v as it is, if the domain says a
// read-only open may.
func (s *DB) readAsIs(v uint64) bool {
	if s.want.ReadAsIs == nil {
		return false
	}
	note, ok := s.want.ReadAsIs(v)
	if ok {
		s.schema = v
		if note != "" {
			s.notes = append(s.notes, note)
		}
	}
	return ok
}

func (s *DB) migrate() error {
	// Most opens need no write at all: don't spend an fsync on them.
	v, complete, resumed, err := s.schemaState()
	if err != nil {
		return err
	}
	s.migratedFrom = v
	switch {
	case s.readOnly && resumed:
		return fmt.Errorf("questbox store %s: its upgrade from v%d to v%d was interrupted (a power cut or a kill between two of its parts, each committed whole): it cannot be read until the upgrade is finished, which writes to it: run `questbox run` or a writing command, which finish it: %w", s.path, v, s.want.Version, ErrReadOnly)
	case v > s.want.Version:
		return fmt.Errorf("questbox store %s has schema v%d, this questbox knows v%d; upgrade questbox: %w", s.path, v, s.want.Version, ErrSchema)
	case v == s.want.Version && complete:
		s.schema = v
		return nil
	case s.readOnly && complete && s.readAsIs(v):
		return nil
	case s.readOnly:
		return fmt.Errorf("questbox store %s has schema v%d and needs an upgrade to v%d, which writes to it: run `questbox run` or a writing command first: %w", s.path, v, s.want.Version, ErrReadOnly)
	}
	if v == s.want.Version {
		// Re-create any bucket a salvage could not bring over.
		if err := s.Update(CreateBuckets); err != nil {
			return err
		}
	}
	for v < s.want.Version {
		from, more := v, false
		err = s.Update(func(tx *Tx) error {
			m := tx.Bucket(Meta)
			for w := from; w < s.want.Version; w++ {
				err := s.want.Migrations[w](tx)
				if errors.Is(err, ErrMigrationContinues) {
					// This part commits; no build of schema w or older
					// reads the store from now on.
					v, more = w, true
					if err := m.Put(KeyMigrating, U64(w)); err != nil {
						return err
					}
					return m.Put(KeySchema, U64(w+1))
				}
				if err != nil {
					return fmt.Errorf("migrate store to schema v%d: %w", w+1, err)
				}
			}
			if err := m.Delete(KeyMigrating); err != nil {
				return err
			}
			return m.Put(KeySchema, U64(s.want.Version))
		})
		if err != nil {
			return err
		}
		if !more {
			break
		}
	}
	s.schema = s.want.Version
	if resumed {
		s.notes = append(s.notes, fmt.Sprintf("the store's upgrade from v%d to v%d, interrupted (a power cut or a kill between two of its parts), was finished", s.migratedFrom, s.want.Version))
	}
	return nil
}

// Schema is the file's schema version: the one this build writes, or an
// older one a read-only open reads as it is.
func (s *DB) Schema() uint64 { return s.schema }

// Created reports whether this open created the file: a new, empty store.
func (s *DB) Created() bool { return s.created }

// PagesAllocated is the bytes of the pages the commits since open
// allocated (bbolt writes every dirty page to a new one): with a meta page
// (PageSize) a commit, what they wrote, deterministic unlike the time a
// commit takes. For a benchmark or a test.
func (s *DB) PagesAllocated() int64 {
	st := s.db.Stats()
	return st.TxStats.GetPageAlloc()
}

// PageSize is the size of the file's pages.
func (s *DB) PageSize() int { return s.db.Info().PageSize }

// Close closes the file.
func (s *DB) Close() error { return s.db.Close() }

// Dir is the data directory.
func (s *DB) Dir() string { return s.dir }

// Path is the store file.
func (s *DB) Path() string { return s.path }

// Commits is the number of write transactions committed since open.
func (s *DB) Commits() uint64 { return s.commits.Load() }

// Syncs is the number of fdatasync and fsync calls the commits since open
// made: bbolt syncs after the data pages and after the meta page of every
// commit, and once more when a commit grows the file.
func (s *DB) Syncs() uint64 { return 2*s.commits.Load() + s.grows.Load() }

// committed counts a commit, and whether it grew the file.
func (s *DB) committed() {
	s.commits.Add(1)
	if s.fd == nil {
		return
	}
	if fi, err := s.fd.Stat(); err == nil {
		if old := s.size.Swap(fi.Size()); old != 0 && fi.Size() > old {
			s.grows.Add(1)
		}
	}
}

// Update runs fn in one write transaction. An error of fn is returned as
// it is; a transaction that cannot begin or commit (a full disk, an I/O
// error, a closed store) is ErrStoreFailed.
func (s *DB) Update(fn func(tx *Tx) error) error {
	if s.readOnly {
		return fmt.Errorf("questbox store %s: a write was asked of a read-only open: %w", s.path, ErrReadOnly)
	}
	var fnErr error
	err := s.guard(func() error {
		return s.db.Update(func(tx *bolt.Tx) error {
			fnErr = fn(txOf(tx))
			return fnErr
		})
	})
	switch {
	case err == nil:
		s.committed()
		return nil
	case fnErr != nil || errors.Is(err, ErrCorrupt):
		return err
	}
	return fmt.Errorf("questbox store %s: write failed: %w: %w", s.path, ErrStoreFailed, err)
}

// View runs fn in a read transaction. An error of fn is returned as it
// is; a transaction that cannot begin (a closed store) is ErrStoreFailed.
func (s *DB) View(fn func(tx *Tx) error) error {
	var fnErr error
	err := s.guard(func() error {
		return s.db.View(func(tx *bolt.Tx) error {
			fnErr = fn(txOf(tx))
			return fnErr
		})
	})
	if err == nil || fnErr != nil || errors.Is(err, ErrCorrupt) {
		return err
	}
	return fmt.Errorf("questbox store %s: read failed: %w: %w", s.path, ErrStoreFailed, err)
}

// guard runs fn, turning a panic or a memory fault while bbolt reads the
// file (a page damaged after the open's check) into ErrCorrupt instead of
// a crash. bbolt rolls the transaction back as the panic unwinds. A
// "BUG:" panic of our own is a broken invariant and is not caught.
func (s *DB) guard(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		if msg := fmt.Sprint(p); strings.HasPrefix(msg, "BUG:") {
			panic(p)
		}
		err = fmt.Errorf("questbox store %s failed while reading (%v): it may be damaged; check it with `questbox verify --data %s` and recover what is readable with `questbox salvage --data %s`: %w",
			s.path, p, s.dir, s.dir, ErrCorrupt)
	}()
	return fn()
}

// freelistType is how bbolt keeps the store's free pages in memory; the
// file is the same either way (a sorted list of page ids). Every bolt.Open
// of a store that is written uses it. The hashmap form (spans by size)
// allocates a run of pages faster in a file with many free pages, but
// makes every write transaction's begin merge the pages the previous
// commit freed into its maps, page by page, and every commit rebuild and
// sort the whole list to write it; the array form merges two sorted lists
// and writes its own. A tick frees and allocates a few hundred single
// pages: its begin costs a quarter to a half with the array form, and
// the array form reuses free pages where the hashmap grew the file. With
// a hundred thousand free pages and more the array's begin (a new merged
// list each time) costs milliseconds more and its commit as much less; a store
// with that many is compacted at its next open.
const freelistType = bolt.FreelistArrayType

// openBolt is bolt.Open under recover: should a damaged file still trip
// one of bbolt's assertions while it opens, the error names it and
// release closes the file bbolt was given (bbolt's own cleanup did not run).
func openBolt(path string, opt *bolt.Options, release func()) (db *bolt.DB, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			release()
			db, err = nil, fmt.Errorf("%w: %v", berrors.ErrInvalid, r)
		}
	}()
	return bolt.Open(path, 0o600, opt)
}

// SyncDir fsyncs a directory, so that an entry created or renamed in it
// survives a power cut (the engine's device key is made beside the store).
func SyncDir(dir string) error { return syncDir(dir) }

// syncDir fsyncs a directory, so that an entry created or renamed in it
// survives a power cut.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
