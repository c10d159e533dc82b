package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/questbox/questbox/gates"
)

// LedgerRecord is one verdict in the hash-chained ledger. Hash is
// sha256(Prev || JSON of the record with Hash empty); Prev is the Hash of the
// record before (empty for the first). Rewriting any locked verdict breaks
// the chain or the match between a terminal node and its last record.
type LedgerRecord struct {
	Seq       uint64       `json:"seq"`
	Prev      string       `json:"prev"`
	Time      time.Time    `json:"time"`
	Quest     string       `json:"quest"`
	Node      string       `json:"node"`
	Outcome   string       `json:"outcome"` // PASS, FAIL, REVIEW, CONSENT, REJECTED, ABORTED
	Status    Status       `json:"status"`  // node status after this verdict
	ClaimHash string       `json:"claim_hash,omitempty"`
	Facts     []gates.Fact `json:"facts,omitempty"`
	Hash      string       `json:"hash"`
}

func (r LedgerRecord) digest() string {
	r.Hash = ""
	raw, err := json.Marshal(r)
	if err != nil {
		panic("BUG: ledger record does not encode: " + err.Error())
	}
	h := sha256.New()
	h.Write([]byte(r.Prev))
	h.Write(raw)
	return hex.EncodeToString(h.Sum(nil))
}

// ledger appends a verdict for n (in its current status) to the chain.
func (t *txn) ledger(n *Node, outcome string, facts []gates.Fact) error {
	b := appendOnly(t.tx.Bucket(bLedger))
	meta := t.tx.Bucket(bMeta)
	seq, err := b.NextSequence()
	if err != nil {
		return err
	}
	r := LedgerRecord{Seq: seq, Prev: string(meta.Get(kLedgerHead)), Time: t.now, Quest: n.Quest, Node: n.ID,
		Outcome: outcome, Status: n.Status, ClaimHash: n.ClaimHash, Facts: facts}
	r.Hash = r.digest()
	if err := putJSON(b, u64(seq), r); err != nil {
		return err
	}
	return meta.Put(kLedgerHead, []byte(r.Hash))
}

// ErrLedgerBroken is returned by Verify when the chain or a locked node does
// not match what was recorded.
var ErrLedgerBroken = errors.New("verdict ledger is broken")

// VerifyReport is what Verify found.
type VerifyReport struct {
	Records int `json:"records"`
	Locked  int `json:"locked_nodes"`
}

// Verify checks the store's pages and the whole verdict ledger: every
// record's hash and link, and that every terminal node still has the status
// and claim hash of its last ledger record. The error names the first
// broken record.
func (e *Engine) Verify() (VerifyReport, error) {
	var rep VerifyReport
	if err := e.store.Check(); err != nil {
		return rep, fmt.Errorf("questbox store %s: %v: %w", e.store.path, err, ErrCorrupt)
	}
	err := e.store.view(func(tx *bolt.Tx) error {
		last := map[string]LedgerRecord{}
		prev := ""
		c := tx.Bucket(bLedger).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			var r LedgerRecord
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("ledger record %d does not decode (%v): %w", seqOf(k), err, ErrLedgerBroken)
			}
			if r.Seq != seqOf(k) {
				return fmt.Errorf("ledger record %d claims seq %d: %w", seqOf(k), r.Seq, ErrLedgerBroken)
			}
			if r.Prev != prev {
				return fmt.Errorf("ledger record %d (node %s): link to previous record broken: %w", r.Seq, r.Node, ErrLedgerBroken)
			}
			if got := r.digest(); got != r.Hash {
				return fmt.Errorf("ledger record %d (node %s): hash mismatch, the record was rewritten: %w", r.Seq, r.Node, ErrLedgerBroken)
			}
			prev = r.Hash
			last[r.Node] = r
			rep.Records++
		}
		if head := string(tx.Bucket(bMeta).Get(kLedgerHead)); head != prev {
			return fmt.Errorf("ledger head does not match the last record (records were removed): %w", ErrLedgerBroken)
		}
		return tx.Bucket(bLocked).ForEachBucket(func(q []byte) error {
			return tx.Bucket(bLocked).Bucket(q).ForEach(func(_, id []byte) error {
				n, err := readNode(tx, string(id))
				if err != nil {
					return fmt.Errorf("locked node %s: %v: %w", id, err, ErrLedgerBroken)
				}
				r, ok := last[n.ID]
				switch {
				case !ok:
					return fmt.Errorf("locked node %s (%s) has no ledger record: %w", n.ID, n.Status, ErrLedgerBroken)
				case r.Status != n.Status:
					return fmt.Errorf("locked node %s is %s but ledger record %d says %s: %w", n.ID, n.Status, r.Seq, r.Status, ErrLedgerBroken)
				case r.ClaimHash != n.ClaimHash:
					return fmt.Errorf("locked node %s: claim hash differs from ledger record %d: %w", n.ID, r.Seq, ErrLedgerBroken)
				}
				rep.Locked++
				return nil
			})
		})
	})
	return rep, err
}
