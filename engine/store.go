package engine

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// SchemaVersion is the store layout this build writes. Older stores are
// migrated forward at open; newer ones are refused with ErrSchema.
const SchemaVersion = 1

// StoreFile is the name of the bbolt file inside the data directory.
const StoreFile = "questbox.db"

// Bucket names. Nested buckets keyed by quest id keep per-quest indexes so
// that the tick touches O(active quests) keys, never every node.
var (
	bMeta     = []byte("meta")
	bQuests   = []byte("quests")
	bActive   = []byte("active")   // quest id -> nil: the quests the tick visits
	bNodes    = []byte("nodes")    // node seq (big endian) -> Node
	bPending  = []byte("pending")  // quest -> {order -> node id}
	bProposed = []byte("proposed") // quest -> {order -> node id}
	bDeferred = []byte("deferred") // quest -> {order -> node id}
	bQNodes   = []byte("qnodes")   // quest -> {order -> node id}
	bHyps     = []byte("hyps")     // quest -> {sha256(normalised hypothesis) -> node id}
	bLocked   = []byte("locked")   // quest -> {lock seq -> node id}
	bEdges    = []byte("edges")    // quest -> {seq -> Edge}
	bRuns     = []byte("runs")     // run id -> Run
	bRunning  = []byte("running")  // node id -> run id
	bConsent  = []byte("consent")  // node id -> nil: nodes awaiting consent
	bEvents   = []byte("events")   // seq -> Event
	bCursors  = []byte("cursors")  // consumer -> seq acknowledged
	bLedger   = []byte("ledger")   // seq -> LedgerRecord
	bExports  = []byte("exports")  // quest -> exportState

	allBuckets = [][]byte{bMeta, bQuests, bActive, bNodes, bPending, bProposed, bDeferred, bQNodes, bHyps, bLocked, bEdges, bRuns, bRunning, bConsent, bEvents, bCursors, bLedger, bExports, bJudge}

	kSchema     = []byte("schema")
	kLedgerHead = []byte("ledger_head")
	kNodeSeq    = []byte("node_seq")
)

// migrations[i] upgrades a store from schema i to i+1. Schema 0 is an empty
// file; migration 0 creates every bucket.
var migrations = []func(tx *bolt.Tx) error{
	func(tx *bolt.Tx) error {
		for _, b := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	},
}

// StoreOptions tune Open.
type StoreOptions struct {
	// LockTimeout bounds the wait for another process's lock. Default 3s.
	LockTimeout time.Duration
	// Check runs the full page-level integrity check at open. The daemon
	// and `verify` set it; short CLI commands rely on bbolt's meta-page
	// checksums, which are always verified.
	Check bool
}

// Store is the bbolt file on the SD card. It is safe for concurrent use.
type Store struct {
	db   *bolt.DB
	dir  string
	path string
	// commits counts write transactions committed; each is one bbolt
	// commit (data pages, then meta page, each followed by fdatasync).
	commits atomic.Uint64
	// writeFault, when set (tests), is asked before each write
	// transaction; an error fails it as a full disk would.
	writeFault func() error
}

// OpenStore opens (creating if needed) the store in dir.
//
// Errors: ErrInUse when another process holds the file past the lock
// timeout; ErrCorrupt when the file fails its checks — the message names the
// salvage command; ErrSchema when a newer questbox wrote it.
func OpenStore(dir string, opt StoreOptions) (*Store, error) {
	if opt.LockTimeout <= 0 {
		opt.LockTimeout = 3 * time.Second
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("questbox store %s: %w", dir, err)
	}
	path := filepath.Join(dir, StoreFile)
	db, err := openBolt(path, &bolt.Options{Timeout: opt.LockTimeout, FreelistType: bolt.FreelistMapType})
	if err != nil {
		switch {
		case errors.Is(err, berrors.ErrTimeout):
			return nil, fmt.Errorf("questbox store %s is in use by another process (is `questbox run` running? the CLI reaches a running daemon through its control socket): %w", dir, ErrInUse)
		case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrChecksum), errors.Is(err, berrors.ErrVersionMismatch),
			// A file cut short (bbolt has no typed error for it).
			strings.Contains(err.Error(), "file size too small"):
			return nil, corrupt(dir, path, err)
		}
		return nil, fmt.Errorf("questbox store %s: %w", path, err)
	}
	s := &Store{db: db, dir: dir, path: path}
	if opt.Check {
		if err := s.Check(); err != nil {
			db.Close()
			return nil, corrupt(dir, path, err)
		}
	}
	if err := s.migrate(); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

func corrupt(dir, path string, cause error) error {
	return fmt.Errorf("questbox store %s is corrupt (%v): questbox refuses to run on it; move it aside and recover what is readable with `questbox salvage --data %s`: %w", path, cause, dir, ErrCorrupt)
}

func (s *Store) migrate() error {
	// Most opens need no write at all: don't spend an fsync on them.
	current := false
	_ = s.db.View(func(tx *bolt.Tx) error {
		m := tx.Bucket(bMeta)
		if m == nil || len(m.Get(kSchema)) != 8 || binary.BigEndian.Uint64(m.Get(kSchema)) != SchemaVersion {
			return nil
		}
		for _, b := range allBuckets {
			if tx.Bucket(b) == nil {
				return nil
			}
		}
		current = true
		return nil
	})
	if current {
		return nil
	}
	return s.update(func(tx *bolt.Tx) error {
		var v uint64
		if m := tx.Bucket(bMeta); m != nil {
			if b := m.Get(kSchema); len(b) == 8 {
				v = binary.BigEndian.Uint64(b)
			} else if b != nil {
				return corrupt(s.dir, s.path, fmt.Errorf("schema key has %d bytes", len(b)))
			}
		}
		if v > SchemaVersion {
			return fmt.Errorf("questbox store %s has schema v%d, this questbox knows v%d; upgrade questbox: %w", s.path, v, SchemaVersion, ErrSchema)
		}
		if v == SchemaVersion {
			// Re-create any bucket a salvage could not bring over.
			return migrations[0](tx)
		}
		for ; v < SchemaVersion; v++ {
			if err := migrations[v](tx); err != nil {
				return fmt.Errorf("migrate store to schema v%d: %w", v+1, err)
			}
		}
		return tx.Bucket(bMeta).Put(kSchema, u64(SchemaVersion))
	})
}

// Check reads every bucket, key and value of the store, then runs bbolt's
// page-level consistency check. The walk runs in the calling goroutine
// under recover (and with faults turned into panics), so a garbage page is
// an error here rather than a crash inside bbolt's checker goroutine.
func (s *Store) Check() (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reading the store failed: %v", r)
		}
	}()
	err = s.db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(_ []byte, b *bolt.Bucket) error {
			walkBucket(b)
			return nil
		})
	})
	if err != nil {
		return err
	}
	return s.db.View(func(tx *bolt.Tx) error {
		var errs []error
		for e := range tx.Check() {
			errs = append(errs, e)
			if len(errs) == 10 {
				break
			}
		}
		return errors.Join(errs...)
	})
}

// Close closes the file.
func (s *Store) Close() error { return s.db.Close() }

// Dir is the data directory.
func (s *Store) Dir() string { return s.dir }

// Path is the store file.
func (s *Store) Path() string { return s.path }

// Commits is the number of write transactions committed since open.
func (s *Store) Commits() uint64 { return s.commits.Load() }

func (s *Store) update(fn func(tx *bolt.Tx) error) error {
	if s.writeFault != nil {
		if err := s.writeFault(); err != nil {
			return err
		}
	}
	err := s.db.Update(fn)
	if err == nil {
		s.commits.Add(1)
	}
	return err
}

func (s *Store) view(fn func(tx *bolt.Tx) error) error { return s.db.View(fn) }

func u64(v uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, v)
	return b
}

func getJSON(b *bolt.Bucket, key []byte, v any) (bool, error) {
	raw := b.Get(key)
	if raw == nil {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return false, fmt.Errorf("decode %s: %w", key, err)
	}
	return true, nil
}

func putJSON(b *bolt.Bucket, key []byte, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("BUG: encode %s: %w", key, err)
	}
	return b.Put(key, raw)
}

// sub returns the nested bucket name inside parent, creating it.
func sub(tx *bolt.Tx, parent []byte, name string) (*bolt.Bucket, error) {
	b, err := tx.Bucket(parent).CreateBucketIfNotExists([]byte(name))
	if err != nil {
		return nil, err
	}
	if !bytesEqual(parent, bHyps) {
		appendOnly(b)
	}
	return b, nil
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }

// subRO returns the nested bucket or nil (read-only transactions).
func subRO(tx *bolt.Tx, parent []byte, name string) *bolt.Bucket {
	return tx.Bucket(parent).Bucket([]byte(name))
}

// appendOnly marks a bucket whose keys are mostly appended in order (nodes,
// events, runs, the ledger, per-quest indexes): bbolt then packs its pages
// full instead of splitting them half-empty, which halves the file and the
// pages an SD card rewrites. FillPercent is per bucket handle, per
// transaction, so every writer sets it.
func appendOnly(b *bolt.Bucket) *bolt.Bucket {
	b.FillPercent = 0.95
	return b
}

// walkBucket reads every key and value of b and of its nested buckets.
func walkBucket(b *bolt.Bucket) {
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v == nil {
			if nb := b.Bucket(k); nb != nil {
				walkBucket(nb)
			}
		}
	}
}

// openBolt is bolt.Open under recover: a garbage file can trip bbolt's
// assertions while it reads the meta pages.
func openBolt(path string, opt *bolt.Options) (db *bolt.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			db, err = nil, fmt.Errorf("%w: %v", berrors.ErrInvalid, r)
		}
	}()
	return bolt.Open(path, 0o600, opt)
}
