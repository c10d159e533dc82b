package engine

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/questbox/questbox/engine/commit"
	"github.com/questbox/questbox/engine/judgecache"
	"github.com/questbox/questbox/engine/ledger"
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
)

// The storage is package store (engine/store): the bbolt layout, the file
// checks, compaction, and salvage's page reading. This file joins it to the
// domain: the schema of the domain's records, the store handle the engine
// writes through (with its group commit), and what salvage needs to know
// of the records.

// SchemaVersion is the store layout this build writes. Older stores are
// migrated forward at open; newer ones are refused with ErrSchema.
const SchemaVersion = 10

// StoreFile is the name of the bbolt file inside the data directory.
const StoreFile = store.FileName

// StoreHeld reports whether another process holds the store in dir for
// writing now (a daemon, or a command writing to it), without waiting.
func StoreHeld(dir string) bool {
	return store.HeldExclusive(filepath.Join(dir, StoreFile))
}

// The buckets (store/layout.go), under the names the engine's code uses.
var (
	bMeta     = store.Meta
	bQuests   = store.Quests
	bActive   = store.Active
	bNodes    = store.Nodes
	bPending  = store.Pending
	bProposed = store.Proposed
	bDeferred = store.Deferred
	bQNodes   = store.QNodes
	bHyps     = store.Hyps
	bLocked   = store.Locked
	bEvidence = store.Evidence
	bEdges    = store.Edges
	bRuns     = store.Runs
	bRunning  = store.Running
	bConsent  = store.Consent
	bEvents   = store.Events
	bCursors  = store.Cursors
	bLedger   = store.Ledger
	bExports  = store.Exports
	bJudge    = store.Judge
	bAttempts = store.Attempts

	kSchema = store.KeySchema
	// kMigrated is the last node key a committed part of migration 8
	// looked at (records.MigrateAttempts), while it has parts left.
	kMigrated   = records.KeyMigrated
	kLedgerHead = store.KeyLedgerHead
	kNodeSeq    = store.KeyNodeSeq
)

// schema is the domain's record schema. migrations[i] upgrades a store
// from schema i to i+1. Schema 0 is an empty file; migration 0 creates
// every bucket; migration 1 seals every locked node into the verdict
// ledger (see sealLedger); migration 2 changes no byte: from schema 3 a
// running node's record may still say pending, the running index saying
// that it runs (see records.OverlayRunning), which a questbox that knows only
// schema 2 would misread — the version keeps it from opening the store;
// migration 3 rewrites the quest records in their binary form, and
// migration 4 in the binary form that carries its number of fields (see
// engine/records/questcodec.go); migration 5 moves the running index to the dispatch
// layout (dispatch.go); migration 6 builds the evidence index
// (buildEvidenceIndex, material.go); migration 7 changes no byte: from
// schema 8 the events of a write transaction are one group record
// (engine/records/eventgroup.go), and a dispatch writes its running entry in a compact
// binary form (engine/records/runningentry.go), both of which a questbox that knows only
// schema 7 would misread — the version keeps it from opening the store;
// the single event records and JSON running entries of older stores stay
// as they are (a run in flight ends into the runs bucket as JSON either
// way), and readers take both forms; migration 8 moves each node's attempt
// log but its last attempt out of its record into the attempts bucket
// (migrateAttempts, engine/records/attemptlog.go); migration 9 changes no byte: from
// schema 10 every commit that moves the ledger's head signs it (engine/commit/seal.go),
// which a questbox that knows only schema 9 would not do, leaving a head
// its signature no longer matches — the version keeps it from opening the
// store. The head of a store from before is signed by the open that makes
// the device key (engine/commit, Store.openBoxKey), not by the migration: the migration
// would sign whatever head it found, also one an attacker had set back to
// schema 9.
func schema() store.Schema {
	return store.Schema{Version: SchemaVersion, Migrations: []func(tx *store.Tx) error{
		store.CreateBuckets,
		sealLedger,
		func(*store.Tx) error { return nil },
		records.EncodeQuests,
		records.EncodeQuests,
		records.MigrateRunning,
		buildEvidenceIndex,
		func(*store.Tx) error { return nil },
		migrateAttempts,
		func(*store.Tx) error { return nil },
	}, ReadAsIs: readAsIs}
}

// migrateAttempts is migration 8 (records.MigrateAttempts), its records
// carved as a write's, in parts of about migrateBudget bytes.
func migrateAttempts(tx *store.Tx) error {
	return records.MigrateAttempts(tx, &txn{tx: tx}, migrateBudget, migratePartHook)
}

// migrateBudget is about how many bytes of node records with a log one
// part of migration 8 moves: its memory until the commit is about twice
// that (the new attempt records' pages and the nodes' rewritten leaves).
var migrateBudget = 4 << 20

// migratePartHook, when set, is called as each part of migration 8
// begins. Only the migratefault build (migratefault.go) sets it.
var migratePartHook func()

// readAsIs says which older schemas a read-only open reads as they are.
// Schemas 3 to 7 change no record this build cannot read as it is (quests
// in JSON and in both binary forms decode; a schema 2 store has no running
// node whose record says pending; a running entry keyed by its node alone,
// before schema 6, is found by records.OverlayRunning; without the evidence index
// of schema 7 the owner's material walks the locked index, as it did; the
// single event records and JSON running entries before schema 8 are read
// as they are; a node record that holds its whole attempt log, before
// schema 9, is read as it is; a store of schema 9 has no signature of
// its ledger's head, which Verify says).
// Schema 2 only adds node
// hashes to the ledger: reading schema 1 as it is is harmless, and Verify
// says what it could not check.
func readAsIs(v uint64) (string, bool) {
	switch v {
	case 2, 3, 4, 5, 6, 7, 8, 9:
		return "", true
	case 1:
		return fmt.Sprintf("the store has schema v1: its verdict ledger has no node hashes yet; the next writing command (or `questbox run`) upgrades it to v%d", SchemaVersion), true
	}
	return "", false
}

// StoreOptions tune OpenStore (see store.Options).
type StoreOptions = store.Options

// SalvageReport says what Salvage did (see store.SalvageReport).
type SalvageReport = store.SalvageReport

// Store is the bbolt file on the SD card, as the engine writes it: the
// handle with its group commit and the ledger's signature (engine/commit),
// and the engine's state that lives with it. It is safe for concurrent use.
type Store struct {
	h *commit.Store
	// db is h's file; box is h's device key (nil for a store made by
	// newStore). Both are set before the store is used, then only read.
	db  *store.DB
	box *ledger.Box
	// judged is the store's judge cache, with what it queued and has
	// not committed yet (engine/judgecache); set before the store is used.
	judged *judgecache.Cache
	// shared is the event group the writes of the group commit's
	// transaction share (event.go); used inside it only.
	shared sharedGroup
	// eventJSON is where emit encodes the JSON of an event's facts and
	// device event before they join a group record (records.AppendGroupEvent):
	// used inside a write transaction only, which bbolt runs one at a
	// time, and kept across them, so that each result's verdict does not
	// grow one anew.
	eventJSON []byte
}

// sharedEvents hands the store's shared event group to the group commit
// (commit.Events).
type sharedEvents struct{ g *sharedGroup }

func (ev sharedEvents) Open(tx *store.Tx) { ev.g.open(tx) }
func (ev sharedEvents) Flush() error      { return ev.g.flush() }

// OpenStore opens the store in dir, creating it only where no file exists:
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
// system). A read-only open of a missing store returns an error wrapping
// fs.ErrNotExist.
//
// It loads the box's device key from dir (a writable open makes it when
// there is none; see engine/commit/seal.go for when it signs the head it
// finds), and fails with ErrDeviceKey, closing the store, when the key is
// unusable.
func OpenStore(dir string, opt StoreOptions) (*Store, error) {
	s := &Store{}
	h, err := commit.Open(dir, opt, schema(), sharedEvents{&s.shared})
	if err != nil {
		return nil, err
	}
	s.h, s.db, s.box = h, h.DB(), h.Box()
	s.judged = judgecache.New(judgeStore{s})
	return s, nil
}

func newStore(db *store.DB) *Store {
	s := &Store{db: db}
	s.h = commit.New(db, sharedEvents{&s.shared})
	s.judged = judgecache.New(judgeStore{s})
	return s
}

// Salvage recovers every readable record of the damaged store in dir
// into a new store that replaces it; the damaged file is kept beside it as
// questbox.db.corrupt-<now in UTC>. See store.Salvage for how it reads
// the file; the engine derives again what it keeps in step with the
// records (rebuild, salvage.go) and records the loss in the verdict ledger.
//
// The salvaged store's ledger head is signed with dir's device key (made
// if there is none) unless the damaged store's signature showed its
// ledger rewritten (salvageSeal).
func Salvage(dir string, now time.Time) (SalvageReport, error) {
	k, _, err := ledger.LoadOrCreateDeviceKey(dir)
	if err != nil {
		return SalvageReport{Store: filepath.Join(dir, StoreFile)}, fmt.Errorf("salvage: %w", err)
	}
	return store.Salvage(dir, now, salvageRecords(k))
}

// salvageRecords is what salvage needs of the engine's records; k, when
// set, signs the salvaged ledger's head.
func salvageRecords(k *DeviceKey) store.Records {
	var sv ledger.SalvageSeal
	return store.Records{
		Schema:  schema(),
		Damaged: damagedRecords,
		Verify: func(db *store.DB) ([]string, error) {
			note, err := sv.Sign(db, k)
			if err != nil {
				return nil, err
			}
			rep, err := newStore(db).Verify()
			if note != "" {
				rep.Notes = append(rep.Notes, note)
			}
			return rep.Notes, err
		},
		Probes: probes,
		Rebuild: func(tx *store.Tx, now time.Time, seqKnown func([]byte) bool) ([]string, error) {
			sv.Was, _ = ledger.CheckSeal(tx, SchemaVersion, &ledger.Box{Key: k})
			sv.Read = true
			return rebuild(tx, now, seqKnown)
		},
	}
}

// Close closes the file.
func (s *Store) Close() error { return s.h.Close() }

// Dir is the data directory.
func (s *Store) Dir() string { return s.db.Dir() }

// Path is the store file.
func (s *Store) Path() string { return s.db.Path() }

// Notes says what the open found and did that the owner should know: a
// damaged meta page and its repair, an old schema read as it is, a device
// key made, a ledger head signed or one this store will not sign on top
// of.
func (s *Store) Notes() []string { return s.h.Notes() }

// ReadOnly reports whether the store was opened read-only.
func (s *Store) ReadOnly() bool { return s.db.ReadOnly() }

// Commits is the number of write transactions committed since open.
func (s *Store) Commits() uint64 { return s.db.Commits() }

// Syncs is the number of fdatasync and fsync calls the commits since open
// made (see store.DB.Syncs).
func (s *Store) Syncs() uint64 { return s.db.Syncs() }

// Check walks every page of the store on a consistent snapshot and
// returns ErrCorrupt naming every problem found. It is safe while the
// engine writes.
func (s *Store) Check() error { return s.db.Check() }

// The handle's writes (engine/commit), under the names the engine's code
// uses.
type ticket = commit.Ticket

func (s *Store) update(fn func(tx *store.Tx) error) error { return s.h.Update(fn) }
func (s *Store) view(fn func(tx *store.Tx) error) error   { return s.h.View(fn) }
func (s *Store) batch(fn func(*store.Tx) error, tk *ticket) error {
	return s.h.Batch(fn, tk)
}
func (s *Store) batchAsync(fn func(*store.Tx) error, tk *ticket, then func(error)) {
	s.h.BatchAsync(fn, tk, then)
}
func (s *Store) expect() *ticket                { return s.h.Expect() }
func (s *Store) expectFrom(runsOut func() bool) { s.h.ExpectFrom(runsOut) }
func (s *Store) beforeEachCommit(fn func())     { s.h.BeforeEachCommit(fn) }
func (s *Store) afterEachCommit(fn func())      { s.h.AfterEachCommit(fn) }
func (s *Store) readOnlyWrite() error           { return s.h.ReadOnlyWrite() }

// runsOut reports whether runs are in flight or about to start: their
// results may still reach the group commit.
func (e *Engine) runsOut() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.inflight) > 0 || e.starting > 0
}

// The bbolt layout's helpers (store/layout.go), under the names the
// engine's code uses.
func u64(v uint64) []byte                                      { return store.U64(v) }
func seqOf(k []byte) uint64                                    { return store.SeqOf(k) }
func getJSON(b *store.Bucket, key []byte, v any) (bool, error) { return store.GetJSON(b, key, v) }
func putJSON(b *store.Bucket, key []byte, v any) error         { return store.PutJSON(b, key, v) }
func sub(tx *store.Tx, parent []byte, name string) (*store.Bucket, error) {
	return store.Sub(tx, parent, name)
}
func subRO(tx *store.Tx, parent []byte, name string) *store.Bucket {
	return store.SubRO(tx, parent, name)
}
func appendOnly(b *store.Bucket) *store.Bucket { return store.AppendOnly(b) }
