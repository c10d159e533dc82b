package store

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
)

// The bbolt layout. Nested buckets keyed by quest id keep per-quest
// indexes so that the tick touches O(active quests) keys, never every node.
var (
	Meta     = []byte("meta")
	Quests   = []byte("quests")
	Active   = []byte("active")   // quest id -> nil: the quests the tick visits
	Nodes    = []byte("nodes")    // node seq (big endian) -> Node
	Pending  = []byte("pending")  // quest -> {order -> node id}
	Proposed = []byte("proposed") // quest -> {order -> node id}
	Deferred = []byte("deferred") // quest -> {order -> node id}
	QNodes   = []byte("qnodes")   // quest -> {order -> node id}
	Hyps     = []byte("hyps")     // quest -> {sha256(normalised hypothesis) -> node id}
	Locked   = []byte("locked")   // quest -> {lock seq -> node id}
	Evidence = []byte("evidence") // quest -> {lock seq -> node id}: the locked nodes an owner's prompt shows (schema 7)
	Edges    = []byte("edges")    // quest -> {seq -> Edge}
	Runs     = []byte("runs")     // run id -> Run
	Running  = []byte("running")  // quest id/node id -> Run: the runs in flight (schema 8 compact, engine/runningentry.go; JSON in 6 and 7; node id -> run id before)
	Consent  = []byte("consent")  // node id -> nil: nodes awaiting consent
	Events   = []byte("events")   // first seq -> the events of one write (engine/eventgroup.go); before schema 8, seq -> Event (JSON)
	Cursors  = []byte("cursors")  // consumer -> seq acknowledged
	Ledger   = []byte("ledger")   // seq -> LedgerRecord
	Exports  = []byte("exports")  // quest -> export.State
	Judge    = []byte("judge")    // judge.CacheKey -> judge.Result
	Attempts = []byte("attempts") // seq -> one attempt of a node's log (schema 9, engine/attemptlog.go)

	// Buckets is every top-level bucket.
	Buckets = [][]byte{Meta, Quests, Active, Nodes, Pending, Proposed, Deferred, QNodes, Hyps, Locked, Evidence, Edges, Runs, Running, Consent, Events, Cursors, Ledger, Exports, Judge, Attempts}
	// IndexBuckets are the buckets kept in step with the nodes and quests:
	// everything in them can be derived again from those records.
	IndexBuckets = [][]byte{Pending, Proposed, Deferred, QNodes, Hyps, Locked, Evidence, Running, Consent, Active}
	// RecordBuckets hold records read one by one (a nested bucket of
	// Edges per quest): JSON, but for the quests' and the attempts'
	// binary forms.
	RecordBuckets = [][]byte{Nodes, Quests, Events, Ledger, Runs, Exports, Judge, Edges, Attempts}

	// AddedIn is the schema a bucket first exists in, for the buckets a
	// store of an older schema lacks: such a store, read as it is, is
	// complete without them.
	AddedIn = map[string]uint64{string(Evidence): 7, string(Attempts): 9}

	KeySchema = []byte("schema")
	// KeyMigrating is the schema version whose migration committed a part
	// of its work and not the rest (ErrMigrationContinues).
	KeyMigrating  = []byte("migrating")
	KeyLedgerHead = []byte("ledger_head")
	// KeyLedgerSeal is the device key's signature of the ledger's head
	// (schema 10; engine/commit/seal.go).
	KeyLedgerSeal = []byte("ledger_seal")
	KeyNodeSeq    = []byte("node_seq")
)

// CreateBuckets creates every bucket that does not exist: migration 0.
func CreateBuckets(tx *Tx) error {
	for _, b := range Buckets {
		if _, err := tx.CreateBucketIfNotExists(b); err != nil {
			return err
		}
	}
	return nil
}

// SeqOf reads an 8-byte big-endian sequence key.
func SeqOf(k []byte) uint64 {
	if len(k) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(k)
}

// U64 is the 8-byte big-endian key of v.
func U64(v uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, v)
	return b
}

func GetJSON(b *Bucket, key []byte, v any) (bool, error) {
	raw := b.Get(key)
	if raw == nil {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return false, fmt.Errorf("decode %s: %w", key, err)
	}
	return true, nil
}

func PutJSON(b *Bucket, key []byte, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("BUG: encode %s: %w", key, err)
	}
	return b.Put(key, raw)
}

// Sub returns the nested bucket name inside parent, creating it.
func Sub(tx *Tx, parent []byte, name string) (*Bucket, error) {
	b, err := tx.Bucket(parent).CreateBucketIfNotExists([]byte(name))
	if err != nil {
		return nil, err
	}
	if !bytesEqual(parent, Hyps) {
		AppendOnly(b)
	}
	return b, nil
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }

// SubRO returns the nested bucket or nil (read-only transactions).
func SubRO(tx *Tx, parent []byte, name string) *Bucket {
	return tx.Bucket(parent).Bucket([]byte(name))
}

// AppendOnly marks a bucket whose keys are mostly appended in order (nodes,
// events, runs, the ledger, per-quest indexes): bbolt then packs its pages
// full instead of splitting them half-empty, which halves the file and the
// pages an SD card rewrites. FillPercent is per bucket handle, per
// transaction, so every writer sets it.
func AppendOnly(b *Bucket) *Bucket {
	b.FillPercent = 0.95
	return b
}
