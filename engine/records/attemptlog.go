package records

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/gates"
)

// The attempt log (schema 9).
//
// A node's record held its whole attempt log, about 600 bytes an attempt:
// a busy node's record grew to a page of its own, and each result of a run
// read and rewrote it. From
// schema 9 the record holds the last attempt only (Node.LastAttempt, which
// the next may merge into), and every attempt before it is a record of the
// attempts bucket, appended when the next attempt does not merge: the
// bucket is never rewritten, and a result writes the node's record, a few
// hundred bytes, and one record at the bucket's right edge.
//
// A record is keyed by the bucket's sequence (8 bytes, big-endian) and
// names its node and the node's attempt before it, so that each node's
// records are a chain, newest first, from the record's AttemptSeq. Only
// the readers that show the log walk it (readNodeLog); a write never does.
// The node's AttemptSum is a running hash of its chain (sha256 of the sum
// before and each record, oldest first), so that a locked node's ledger
// hash, which binds its record's bytes, binds its whole log too.
//
// A record's binary form is the store's (store.AppendAttempt,
// engine/store/attemptlog.go).

// ErrAttempt is returned when an attempt record does not decode.
var ErrAttempt = store.ErrAttempt

// AppendAttemptRecord appends the record of node's attempt a, whose
// previous attempt is the record prev, to b.
func AppendAttemptRecord(b []byte, node string, prev uint64, a *domain.Attempt) []byte {
	// The facts of most attempts fit here: a spill allocates nothing for
	// them.
	var room [4]store.Fact
	sa := store.Attempt{At: a.At, Run: a.Run, Outcome: a.Outcome, Feedback: a.Feedback, ClaimHash: a.ClaimHash,
		TryUsed: a.TryUsed, Repeats: a.Repeats}
	if a.Facts != nil {
		sa.Facts = room[:0]
		for _, f := range a.Facts {
			sa.Facts = append(sa.Facts, store.Fact{Rule: f.Rule, Level: uint64(f.Level), Where: f.Where, Expected: f.Expected, Actual: f.Actual})
		}
	}
	return store.AppendAttempt(b, node, prev, &sa)
}

// AttemptRecord is a decoded attempt record.
type AttemptRecord struct {
	Node    string
	Prev    uint64
	Attempt domain.Attempt
}

// DecodeAttemptRecord decodes v, checking its form and checksum.
func DecodeAttemptRecord(v []byte) (AttemptRecord, error) {
	r, err := store.DecodeAttempt(v)
	if err != nil {
		return AttemptRecord{}, err
	}
	sa := &r.Attempt
	a := domain.Attempt{At: sa.At, Run: sa.Run, Outcome: sa.Outcome, Feedback: sa.Feedback, ClaimHash: sa.ClaimHash,
		TryUsed: sa.TryUsed, Repeats: sa.Repeats}
	if sa.Facts != nil {
		a.Facts = make([]gates.Fact, len(sa.Facts))
		for i, f := range sa.Facts {
			a.Facts[i] = gates.Fact{Rule: f.Rule, Level: gates.Level(f.Level), Where: f.Where, Expected: f.Expected, Actual: f.Actual}
		}
	}
	return AttemptRecord{Node: r.Node, Prev: r.Prev, Attempt: a}, nil
}

// chainSum is the running hash of a chain whose sum was sum, after the
// record v.
func chainSum(sum string, v []byte) string {
	h := sha256.New()
	h.Write([]byte(sum))
	h.Write(v)
	return hex.EncodeToString(h.Sum(nil))
}

// Carver is where a write transaction carves its records from (the
// engine's transaction): Spare is room for an encoder to append to, Claim
// reserves its result and returns it cut to its length, Key8 is a
// big-endian uint64 key carved so.
type Carver interface {
	Spare(hint int) []byte
	Claim(b []byte) []byte
	Key8(v uint64) []byte
}

// SpillAttempts appends the attempts addAttempt sent out of n's record to
// the attempts bucket of tx (saveNode), carving them from c: each names
// the one before it.
func SpillAttempts(tx *store.Tx, c Carver, n *domain.Node) error {
	if len(n.Spill) == 0 {
		return nil
	}
	b := tx.Attempts()
	b.FillPercent = 1.0 // only ever appended at its right edge
	for i := range n.Spill {
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		v := c.Claim(AppendAttemptRecord(c.Spare(256), n.ID, n.AttemptSeq, &n.Spill[i]))
		if err := b.Put(c.Key8(seq), v); err != nil {
			return err
		}
		n.AttemptSeq, n.AttemptSum = seq, chainSum(n.AttemptSum, v)
	}
	n.Spill = n.Spill[:0]
	return nil
}

// PutNode stores n's record: the last attempt of its log only (whatever
// the node read of it), and that attempt's facts, feedback and claim hash
// only where they are not the node's own (the gate's result of the last
// submission is the last attempt's, most of the time: the record would
// hold them twice).
func PutNode(b *store.Bucket, n *domain.Node) error {
	rec := n
	if n.AttemptCount > 0 {
		c := *n
		c.Attempts = nil
		if l := n.LastAttempt; l != nil && l.Feedback == n.Feedback && l.ClaimHash == n.ClaimHash && slices.Equal(l.Facts, n.Facts) && (l.Facts == nil) == (n.Facts == nil) {
			last := *l
			last.Facts, last.Feedback, last.ClaimHash = nil, "", ""
			c.LastAttempt, c.LastAsNode = &last, true
		}
		rec = &c
	}
	return store.PutJSON(b, store.U64(n.Order), rec)
}

// DecodeNode decodes a node's record (PutNode's).
func DecodeNode(raw []byte, n *domain.Node) error {
	if err := json.Unmarshal(raw, n); err != nil {
		return err
	}
	if n.LastAsNode && n.LastAttempt != nil {
		l := n.LastAttempt
		l.Facts, l.Feedback, l.ClaimHash = slices.Clone(n.Facts), n.Feedback, n.ClaimHash
	}
	n.LastAsNode = false
	return nil
}

// LoadAttempts fills n.Attempts with its whole log: the chain from
// n.AttemptSeq and the last attempt. A record held its whole log before
// schema 9 (and a locked node's record still may): that log is the whole.
func LoadAttempts(tx *store.Tx, n *domain.Node) error {
	if n.AttemptCount == 0 {
		n.Logged = true
		return nil
	}
	chain, _, err := ReadChain(tx, n)
	if err != nil {
		return err
	}
	log := make([]domain.Attempt, 0, len(chain)+1)
	for i := len(chain) - 1; i >= 0; i-- {
		log = append(log, chain[i].Attempt)
	}
	if n.LastAttempt != nil {
		log = append(log, *n.LastAttempt)
	}
	n.Attempts, n.Logged = log, true
	return nil
}

// chainFault is where a node's chain breaks (ReadChain).
type chainFault struct {
	seq uint64
	why string
}

// ReadChain reads n's chain of attempt records, newest first, and the
// running hash of the records read. It stops at the first record that is
// missing, does not decode, names another node or does not come before
// the one that named it (a cycle), and says so in fault, with the error
// that the chain is broken.
func ReadChain(tx *store.Tx, n *domain.Node) (chain []AttemptRecord, raws [][]byte, err error) {
	b := tx.Attempts()
	seq := n.AttemptSeq
	var fault *chainFault
	for seq != 0 {
		var v []byte
		if b != nil {
			v = b.Get(store.U64(seq))
		}
		if v == nil {
			fault = &chainFault{seq, "is missing"}
			break
		}
		r, derr := DecodeAttemptRecord(v)
		switch {
		case derr != nil:
			fault = &chainFault{seq, "does not decode"}
		case r.Node != n.ID:
			fault = &chainFault{seq, "is node " + r.Node + "'s"}
		case r.Prev >= seq:
			fault = &chainFault{seq, fmt.Sprintf("names attempt record %d before it (a cycle)", r.Prev)}
		}
		if fault != nil {
			break
		}
		chain, raws = append(chain, r), append(raws, v)
		seq = r.Prev
	}
	if fault != nil {
		return chain, raws, &chainError{node: n.ID, fault: *fault}
	}
	return chain, raws, nil
}

// chainError says where a node's attempt chain breaks.
type chainError struct {
	node  string
	fault chainFault
}

func (e *chainError) Error() string {
	return fmt.Sprintf("node %s: its attempt record %d %s", e.node, e.fault.seq, e.fault.why)
}

func (e *chainError) Unwrap() error { return domain.ErrCorrupt }

// CheckChains checks every node's chain of attempt records (Verify): each
// is there, decodes, is the node's and comes before the one that names
// it; the node's count and running hash agree with them.
func CheckChains(tx *store.Tx) []string {
	var out []string
	_ = tx.Nodes().ForEach(func(k, v []byte) error {
		if !bytes.Contains(v, []byte(`"attempt_count":`)) {
			return nil // no chain (a locked node before schema 9: its log inline)
		}
		n := new(domain.Node)
		if DecodeNode(v, n) != nil || n.AttemptCount == 0 {
			return nil // a record that does not decode is checkLedger's
		}
		chain, raws, err := ReadChain(tx, n)
		switch {
		case err != nil:
			out = append(out, err.Error())
		case len(chain)+1 != n.AttemptCount || n.LastAttempt == nil:
			out = append(out, fmt.Sprintf("node %s: %d attempts, its record says %d", n.ID, len(chain)+1, n.AttemptCount))
		case SumOf(raws) != n.AttemptSum:
			out = append(out, fmt.Sprintf("node %s: its attempt records do not hash to its record's sum (rewritten)", n.ID))
		}
		return nil
	})
	return out
}

// SumOf is the running hash of a chain read newest first.
func SumOf(raws [][]byte) string {
	sum := ""
	for i := len(raws) - 1; i >= 0; i-- {
		sum = chainSum(sum, raws[i])
	}
	return sum
}

// KeyMigrated is the meta key of the last node key a committed part of
// migration 8 looked at (MigrateAttempts), while it has parts left.
var KeyMigrated = []byte("attempts_migrated")

// MigrateAttempts is migration 8: every node's attempt log but its last
// attempt moves out of its record into the attempts bucket. A locked
// node's record keeps its log as it is: the ledger binds its bytes, and
// it never takes another attempt. It commits in parts of about
// migrateBudget bytes of node records (store.ErrMigrationContinues), in
// node order, KeyMigrated naming the last node a committed part looked at:
// in one transaction, a year's logs (hundreds of MiB) would be held in
// memory, as dirty pages, until the commit. A node already moved holds
// no log in its record, so a part done again moves nothing twice. carve
// carves the attempt records as a write's; partHook, when set, is called
// as the part begins.
func MigrateAttempts(tx *store.Tx, carve Carver, migrateBudget int, partHook func()) error {
	if partHook != nil {
		partHook()
	}
	if _, err := tx.CreateBucketIfNotExists(store.Attempts); err != nil {
		return err
	}
	meta, nb := tx.Meta(), tx.Nodes()
	c := nb.Cursor()
	k, v := c.First()
	if at := meta.Get(KeyMigrated); at != nil {
		if k, v = c.Seek(at); bytes.Equal(k, at) {
			k, v = c.Next()
		}
	}
	var nodes []*domain.Node
	var last []byte
	for size := 0; k != nil && size < migrateBudget; k, v = c.Next() {
		last = k
		if !bytes.Contains(v, []byte(`"attempts":`)) {
			continue // no log in the record (a JSON string holds no bare quote)
		}
		n := new(domain.Node)
		if err := DecodeNode(v, n); err != nil {
			// Damage inside a sound page: the store's to salvage (which
			// drops the record and finishes the upgrade), not a failed
			// upgrade to retry at every start.
			path := tx.Path()
			return store.Corrupt(filepath.Dir(path), path, fmt.Sprintf("node record %s does not decode (%v)", store.ShowKey(k), err))
		}
		if !n.Status.Terminal() && len(n.Attempts) > 0 {
			nodes = append(nodes, n)
			size += len(v)
		}
	}
	if k != nil {
		last = bytes.Clone(last) // the cursor's bytes: valid in this transaction only
	}
	for _, n := range nodes {
		n.ChainForm()
		if err := SpillAttempts(tx, carve, n); err != nil {
			return err
		}
		if err := PutNode(store.AppendOnly(nb), n); err != nil {
			return err
		}
	}
	if k == nil {
		return meta.Delete(KeyMigrated)
	}
	if err := meta.Put(KeyMigrated, last); err != nil {
		return err
	}
	return store.ErrMigrationContinues
}
