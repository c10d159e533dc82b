package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"

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

// errAttempt is returned when an attempt record does not decode.
var errAttempt = store.ErrAttempt

// appendAttemptRecord appends the record of node's attempt a, whose
// previous attempt is the record prev, to b.
func appendAttemptRecord(b []byte, node string, prev uint64, a *Attempt) []byte {
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

// attemptRecord is a decoded attempt record.
type attemptRecord struct {
	node    string
	prev    uint64
	attempt Attempt
}

// decodeAttemptRecord decodes v, checking its form and checksum.
func decodeAttemptRecord(v []byte) (attemptRecord, error) {
	r, err := store.DecodeAttempt(v)
	if err != nil {
		return attemptRecord{}, err
	}
	sa := &r.Attempt
	a := Attempt{At: sa.At, Run: sa.Run, Outcome: sa.Outcome, Feedback: sa.Feedback, ClaimHash: sa.ClaimHash,
		TryUsed: sa.TryUsed, Repeats: sa.Repeats}
	if sa.Facts != nil {
		a.Facts = make([]gates.Fact, len(sa.Facts))
		for i, f := range sa.Facts {
			a.Facts[i] = gates.Fact{Rule: f.Rule, Level: gates.Level(f.Level), Where: f.Where, Expected: f.Expected, Actual: f.Actual}
		}
	}
	return attemptRecord{node: r.Node, prev: r.Prev, attempt: a}, nil
}

// chainSum is the running hash of a chain whose sum was sum, after the
// record v.
func chainSum(sum string, v []byte) string {
	h := sha256.New()
	h.Write([]byte(sum))
	h.Write(v)
	return hex.EncodeToString(h.Sum(nil))
}

// spillAttempts appends the attempts addAttempt sent out of n's record to
// the attempts bucket (saveNode): each names the one before it.
func (t *txn) spillAttempts(n *Node) error {
	if len(n.Spill) == 0 {
		return nil
	}
	b := t.tx.Attempts()
	b.FillPercent = 1.0 // only ever appended at its right edge
	for i := range n.Spill {
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		v := t.Claim(appendAttemptRecord(t.Spare(256), n.ID, n.AttemptSeq, &n.Spill[i]))
		if err := b.Put(t.Key8(seq), v); err != nil {
			return err
		}
		n.AttemptSeq, n.AttemptSum = seq, chainSum(n.AttemptSum, v)
	}
	n.Spill = n.Spill[:0]
	return nil
}

// putNode stores n's record: the last attempt of its log only (whatever
// the node read of it), and that attempt's facts, feedback and claim hash
// only where they are not the node's own (the gate's result of the last
// submission is the last attempt's, most of the time: the record would
// hold them twice).
func putNode(b *store.Bucket, n *Node) error {
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
	return putJSON(b, u64(n.Order), rec)
}

// decodeNode decodes a node's record (putNode's).
func decodeNode(raw []byte, n *Node) error {
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

// readNodeLog reads node id with its whole attempt log (Node.Attempts):
// what shows a node reads it so, never a write.
func readNodeLog(tx *store.Tx, id string) (*Node, error) {
	n, err := readNode(tx, id)
	if err != nil {
		return nil, err
	}
	return n, loadAttempts(tx, n)
}

// loadAttempts fills n.Attempts with its whole log: the chain from
// n.AttemptSeq and the last attempt. A record held its whole log before
// schema 9 (and a locked node's record still may): that log is the whole.
func loadAttempts(tx *store.Tx, n *Node) error {
	if n.AttemptCount == 0 {
		n.Logged = true
		return nil
	}
	chain, _, err := readChain(tx, n)
	if err != nil {
		return err
	}
	log := make([]Attempt, 0, len(chain)+1)
	for i := len(chain) - 1; i >= 0; i-- {
		log = append(log, chain[i].attempt)
	}
	if n.LastAttempt != nil {
		log = append(log, *n.LastAttempt)
	}
	n.Attempts, n.Logged = log, true
	return nil
}

// chainFault is where a node's chain breaks (readChain).
type chainFault struct {
	seq uint64
	why string
}

// readChain reads n's chain of attempt records, newest first, and the
// running hash of the records read. It stops at the first record that is
// missing, does not decode, names another node or does not come before
// the one that named it (a cycle), and says so in fault, with the error
// that the chain is broken.
func readChain(tx *store.Tx, n *Node) (chain []attemptRecord, raws [][]byte, err error) {
	b := tx.Attempts()
	seq := n.AttemptSeq
	var fault *chainFault
	for seq != 0 {
		var v []byte
		if b != nil {
			v = b.Get(u64(seq))
		}
		if v == nil {
			fault = &chainFault{seq, "is missing"}
			break
		}
		r, derr := decodeAttemptRecord(v)
		switch {
		case derr != nil:
			fault = &chainFault{seq, "does not decode"}
		case r.node != n.ID:
			fault = &chainFault{seq, "is node " + r.node + "'s"}
		case r.prev >= seq:
			fault = &chainFault{seq, fmt.Sprintf("names attempt record %d before it (a cycle)", r.prev)}
		}
		if fault != nil {
			break
		}
		chain, raws = append(chain, r), append(raws, v)
		seq = r.prev
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

func (e *chainError) Unwrap() error { return ErrCorrupt }

// checkChains checks every node's chain of attempt records (Verify): each
// is there, decodes, is the node's and comes before the one that names
// it; the node's count and running hash agree with them.
func checkChains(tx *store.Tx) []string {
	var out []string
	_ = tx.Nodes().ForEach(func(k, v []byte) error {
		if !bytes.Contains(v, []byte(`"attempt_count":`)) {
			return nil // no chain (a locked node before schema 9: its log inline)
		}
		n := new(Node)
		if decodeNode(v, n) != nil || n.AttemptCount == 0 {
			return nil // a record that does not decode is checkLedger's
		}
		chain, raws, err := readChain(tx, n)
		switch {
		case err != nil:
			out = append(out, err.Error())
		case len(chain)+1 != n.AttemptCount || n.LastAttempt == nil:
			out = append(out, fmt.Sprintf("node %s: %d attempts, its record says %d", n.ID, len(chain)+1, n.AttemptCount))
		case sumOf(raws) != n.AttemptSum:
			out = append(out, fmt.Sprintf("node %s: its attempt records do not hash to its record's sum (rewritten)", n.ID))
		}
		return nil
	})
	return out
}

// sumOf is the running hash of a chain read newest first.
func sumOf(raws [][]byte) string {
	sum := ""
	for i := len(raws) - 1; i >= 0; i-- {
		sum = chainSum(sum, raws[i])
	}
	return sum
}

// migrateAttempts is migration 8: every node's attempt log but its last
// attempt moves out of its record into the attempts bucket. A locked
// node's record keeps its log as it is: the ledger binds its bytes, and
// it never takes another attempt. It commits in parts of about
// migrateBudget bytes of node records (store.ErrMigrationContinues), in
// node order, kMigrated naming the last node a committed part looked at:
// in one transaction, a year's logs (hundreds of MiB) would be held in
// memory, as dirty pages, until the commit. A node already moved holds
// no log in its record, so a part done again moves nothing twice.
func migrateAttempts(tx *store.Tx) error {
	if migratePartHook != nil {
		migratePartHook()
	}
	if _, err := tx.CreateBucketIfNotExists(bAttempts); err != nil {
		return err
	}
	meta, nb := tx.Meta(), tx.Nodes()
	c := nb.Cursor()
	k, v := c.First()
	if at := meta.Get(kMigrated); at != nil {
		if k, v = c.Seek(at); bytes.Equal(k, at) {
			k, v = c.Next()
		}
	}
	var nodes []*Node
	var last []byte
	for size := 0; k != nil && size < migrateBudget; k, v = c.Next() {
		last = k
		if !bytes.Contains(v, []byte(`"attempts":`)) {
			continue // no log in the record (a JSON string holds no bare quote)
		}
		n := new(Node)
		if err := decodeNode(v, n); err != nil {
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
	t := &txn{tx: tx} // for spillAttempts' records, carved as a write's
	for _, n := range nodes {
		n.ChainForm()
		if err := t.spillAttempts(n); err != nil {
			return err
		}
		if err := putNode(appendOnly(nb), n); err != nil {
			return err
		}
	}
	if k == nil {
		return meta.Delete(kMigrated)
	}
	if err := meta.Put(kMigrated, last); err != nil {
		return err
	}
	return store.ErrMigrationContinues
}

// migrateBudget is about how many bytes of node records with a log one
// part of migration 8 moves: its memory until the commit is about twice
// that (the new attempt records' pages and the nodes' rewritten leaves).
var migrateBudget = 4 << 20

// migratePartHook, when set, is called as each part of migration 8
// begins. Only the migratefault build (migratefault.go) sets it.
var migratePartHook func()

// repairChains keeps of each node's chain what survives a salvage: a
// chain that breaks loses the attempts before the break, never the node.
// The oldest record left is written again naming none before it, and the
// node's count and running hash are derived again. A locked node it
// changed is one the ledger can no longer prove (recordLoss).
func (r *rebuilder) repairChains() error {
	b := r.tx.Attempts()
	nb := appendOnly(r.tx.Nodes())
	for _, n := range r.nodes {
		if n.AttemptCount == 0 {
			continue
		}
		chain, raws, err := readChain(r.tx, n)
		if err == nil && len(chain)+1 == n.AttemptCount && sumOf(raws) == n.AttemptSum {
			continue
		}
		if k := len(chain); k > 0 && chain[k-1].prev != 0 {
			v := appendAttemptRecord(nil, n.ID, 0, &chain[k-1].attempt)
			if err := b.Put(u64(attemptKeyOf(n, chain, k-1)), v); err != nil {
				return err
			}
			raws[k-1] = v
		}
		lost := n.AttemptCount - 1 - len(chain)
		n.AttemptCount, n.AttemptSum = len(chain)+1, sumOf(raws)
		if len(chain) == 0 {
			n.AttemptSeq = 0
		}
		r.note("node %s: %d of its attempts were lost with their records; its log keeps the %d after them", n.ID, max(0, lost), n.AttemptCount)
		if err := putNode(nb, n); err != nil {
			return err
		}
		r.rewritten = append(r.rewritten, n.ID)
	}
	return nil
}

// resumeUpgrade has the next open run migration 8 again, over every
// node, when a node salvage kept still holds its log in its record in a
// store that says schema 9: its meta keys were lost with their page (the
// schema restored as the newest), or the node came back in a copy from
// before its part moved it. Such a node is read correctly as it is, but
// the store is not the one schema 9 says; the migration moves what it
// finds and nothing twice.
func (r *rebuilder) resumeUpgrade() error {
	m := r.tx.Meta()
	if seqOf(m.Get(kSchema)) <= 8 {
		return nil // the open migrates it anyway
	}
	held := 0
	for _, n := range r.nodes {
		if !n.Status.Terminal() && n.AttemptCount == 0 && len(n.Attempts) > 0 {
			held++
		}
	}
	if held == 0 {
		return nil
	}
	if m.Get(store.KeyMigrating) == nil {
		if err := m.Put(store.KeyMigrating, u64(8)); err != nil {
			return err
		}
	}
	r.note("%d nodes still hold their attempt log in their record (an upgrade from v8 that had not finished): the upgrade runs again over every node when the store is next opened", held)
	return m.Delete(kMigrated)
}

// attemptKeyOf is the key of chain[i]: the node's AttemptSeq for the newest, the
// prev of the record after it otherwise.
func attemptKeyOf(n *Node, chain []attemptRecord, i int) uint64 {
	if i == 0 {
		return n.AttemptSeq
	}
	return chain[i-1].prev
}

// maxAttemptSeq is the highest attempt record any node names.
func maxAttemptSeq(nodes []*Node) uint64 {
	var m uint64
	for _, n := range nodes {
		m = max(m, n.AttemptSeq)
	}
	return m
}
