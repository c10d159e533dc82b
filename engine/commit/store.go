package commit

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/questbox/questbox/engine/ledger"
	"github.com/questbox/questbox/engine/store"
)

// ErrUnchanged is returned by a write function that wrote nothing: it
// does not disturb the batch it is in (see the top of group.go).
var ErrUnchanged = errors.New("nothing to write")

// Events is the event group record the writes of one group commit's
// transaction share (the engine's shared group). Open(tx) starts it for
// the transaction tx (nil: ends it); Flush writes what it holds, last in
// the transaction. Both are called by the goroutine that commits, inside
// the write transaction, which bbolt runs one at a time.
type Events interface {
	Open(tx *store.Tx)
	Flush() error
}

// Store is the bbolt file on the SD card. It is safe for concurrent use.
type Store struct {
	db *store.DB
	// events is the event group the writes of the group commit's
	// transaction share; used inside it only.
	events Events
	// WriteFault, when set (tests), is asked before each write
	// transaction; an error fails it as a full disk would.
	WriteFault func() error
	// group commits the writes that arrive together (group.go).
	group group
	// Latency and DataLatency replace groupLatency and groupDataLatency
	// when set (tests; see gatherKnobs).
	Latency, DataLatency time.Duration
	// release releases the mapped store once no commit came for
	// releaseAfter (releaseMapped); ReleaseGap replaces releaseAfter when
	// set (tests).
	releaseMu  sync.Mutex
	release    *time.Timer
	closed     bool
	ReleaseGap time.Duration
	// released is when the mapped store was last released while busy
	// (releaseBusy).
	released time.Time
	// box is the box's device key and whether this store signs its
	// ledger's new heads (seal.go): set by Open, which opens the
	// store in its data directory; nil for a store opened on another
	// file (a backup, a restore's or a salvage's copy), whose signature
	// Verify checks without knowing the box's key. Set before the store
	// is used, then only read.
	box *ledger.Box
	// notes are what Open did or found of the device key and the
	// head's signature that the owner should know (besides db's).
	notes []string
}

// releaseAfter is how long the store must go without a commit before
// its mapped pages are released. Releasing after every commit made each
// read after it fault its pages in again: a 1,000-dispatch tick cost
// 20-30 % more CPU (bench/RESULTS.md, "the merged tree" of this pass).
// Pages a busy box reads are wanted again within a second; once it is
// quiet they are not.
const releaseAfter = 5 * time.Second

// releaseBusy is how often the mapped pages are released while commits
// keep coming: a busy cycle reads nearly the whole file over a few
// seconds, and holding every page it read until the box goes quiet put
// 14-17 MiB of the store in its peak resident memory. Once every releaseBusy
// the reads fault back in
// only the pages they still use.
const releaseBusy = time.Second

// Open opens the store in dir with the schema sch (see store.Open for
// the file's checks and errors); ev is the event group the group commit's
// writes share.
//
// It loads the box's device key from dir (a writable open makes it when
// there is none; see seal.go for when it signs the head it finds), and
// fails with ErrDeviceKey, closing the store, when the key is unusable.
func Open(dir string, opt store.Options, sch store.Schema, ev Events) (*Store, error) {
	db, err := store.Open(dir, opt, sch)
	if err != nil {
		return nil, err
	}
	s := New(db, ev)
	if err := s.openBoxKey(dir, db.Created()); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// New is the handle of db, opened on a file other than the data
// directory's store (a backup, a restore's or a salvage's copy): it knows
// no device key and signs nothing.
func New(db *store.DB, ev Events) *Store {
	s := &Store{db: db, events: ev}
	s.group.kick = make(chan struct{}, 1)
	return s
}

// DB is the store's file.
func (s *Store) DB() *store.DB { return s.db }

// Box is the box's device key and whether the store signs its ledger's
// new heads; nil for a store made by New.
func (s *Store) Box() *ledger.Box { return s.box }

// Close closes the file.
func (s *Store) Close() error {
	s.releaseMu.Lock()
	s.closed = true
	if s.release != nil {
		s.release.Stop()
	}
	s.releaseMu.Unlock()
	return s.db.Close()
}

// Notes says what the open found and did that the owner should know: a
// damaged meta page and its repair, an old schema read as it is, a device
// key made, a ledger head signed or one this store will not sign on top
// of.
func (s *Store) Notes() []string { return append(s.db.Notes(), s.notes...) }

// ReadOnly reports whether the store was opened read-only.
func (s *Store) ReadOnly() bool { return s.db.ReadOnly() }

// Path is the store file.
func (s *Store) Path() string { return s.db.Path() }

// Update runs fn in one write transaction. An error of fn is returned as
// it is; a transaction that cannot begin or commit (a full disk, an I/O
// error, a closed store) is ErrStoreFailed.
func (s *Store) Update(fn func(tx *store.Tx) error) error {
	if err := s.fault(); err != nil {
		return err
	}
	err := s.db.Update(func(tx *store.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		return s.sealHead(tx)
	})
	if err == nil {
		s.releaseMapped()
	}
	return err
}

// releaseMapped takes the store pages the transactions read out of the
// daemon's resident memory (store.DB.ReleaseMapped; the page cache keeps
// them) once the store has gone releaseAfter without a commit: a busy
// cycle reads pages all over the store, and they stayed mapped while the
// box sat idle, ~17 MiB of its resident memory after an outbox prune
// (docs/design.md, "Memory on a small box"). Called after each commit, it
// pushes that release back, and releases at once if the last release
// while busy is releaseBusy old. The release's failure (a store closed
// meanwhile) costs resident memory only, so it is nobody's error.
func (s *Store) releaseMapped() {
	gap := releaseAfter
	if s.ReleaseGap != 0 {
		gap = s.ReleaseGap
	}
	s.releaseMu.Lock()
	defer s.releaseMu.Unlock()
	if now := time.Now(); !s.closed && now.Sub(s.released) >= releaseBusy {
		s.released = now
		_ = s.db.ReleaseMapped()
	}
	switch {
	case s.closed:
	case s.release == nil:
		s.release = time.AfterFunc(gap, func() { _ = s.db.ReleaseMapped() })
	default:
		s.release.Reset(gap)
	}
}

// fault is the test hook's error, as a failed write.
func (s *Store) fault() error {
	if s.WriteFault == nil || s.db.ReadOnly() {
		return nil
	}
	if err := s.WriteFault(); err != nil {
		return fmt.Errorf("questbox store %s: write failed: %w: %w", s.db.Path(), store.ErrStoreFailed, err)
	}
	return nil
}

// View runs fn in a read transaction (see store.DB.View).
func (s *Store) View(fn func(tx *store.Tx) error) error { return s.db.View(fn) }

// Queue says how many writes wait for the group commit now: queued in
// all, of which callers wait on their commit, and coming announced and
// not yet queued. Tests read it to know a write has joined a batch.
func (s *Store) Queue() (queued, callers, coming int) {
	s.group.mu.Lock()
	defer s.group.mu.Unlock()
	return len(s.group.queue), s.group.callers, s.group.coming
}
