package ledger

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/gates"
)

// Record is one verdict in the hash-chained ledger. Hash is
// sha256(Prev || JSON of the record with Hash empty); Prev is the Hash of the
// record before (empty for the first). Rewriting any locked verdict breaks
// the chain or the match between a terminal node and its last record; the
// record that locks a node also carries a hash of the node's whole stored
// record, so rewriting any byte of a locked node breaks that match too.
type Record struct {
	Seq       uint64        `json:"seq"`
	Prev      string        `json:"prev"`
	Time      time.Time     `json:"time"`
	Quest     string        `json:"quest"`
	Node      string        `json:"node"`
	Outcome   string        `json:"outcome"` // PASS, FAIL, REVIEW, CONSENT, REJECTED, ABORTED, EXPIRED, SALVAGED
	Status    domain.Status `json:"status"`  // node status after this verdict
	ClaimHash string        `json:"claim_hash,omitempty"`
	Facts     []gates.Fact  `json:"facts,omitempty"`
	// NodeHash, on the record that moves a node to a terminal status, is
	// the hex sha256 of the node's stored record (its exact bytes:
	// hypothesis, answer and evidence, verdict, citations, new directions,
	// facts, feedback, attempts and consents, status) as it was locked.
	// Any later change to a byte of that record is found by Verify.
	NodeHash string `json:"node_hash,omitempty"`
	// Lost and Unproven are set on a SALVAGED record only, which `questbox
	// salvage` appends when store damage destroyed part of the ledger or
	// locked nodes: Lost are the ranges of ledger seqs that were lost (the
	// chain is broken exactly there), Unproven the locked nodes whose
	// record or whose proof was lost. Verify reports them as such instead of
	// as tampering.
	Lost     [][2]uint64 `json:"lost,omitempty"`
	Unproven []string    `json:"unproven,omitempty"`
	Hash     string      `json:"hash"`
}

// OutcomeSalvaged is the outcome of the ledger record salvage appends.
const OutcomeSalvaged = "SALVAGED"

// Digest is the record's hash: sha256(Prev || JSON of the record with
// Hash empty), hex.
func (r Record) Digest() string {
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

// NodeHash is the hash a ledger record binds of a node's stored record.
func NodeHash(raw []byte) string {
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// Append chains r after the ledger's head and stores it.
func Append(tx *store.Tx, r Record) error {
	b := store.AppendOnly(tx.Ledger())
	meta := tx.Meta()
	seq, err := b.NextSequence()
	if err != nil {
		return err
	}
	r.Seq, r.Prev = seq, string(meta.Get(store.KeyLedgerHead))
	r.Hash = r.Digest()
	if err := store.PutJSON(b, store.U64(seq), r); err != nil {
		return err
	}
	return meta.Put(store.KeyLedgerHead, []byte(r.Hash))
}

// Decodes says whether v is a ledger record as Verify reads it: Verify
// decodes every ledger record (a time that does not parse is as damaged
// as a broken brace), so must what salvage keeps.
func Decodes(v []byte) bool { return json.Valid(v) && json.Unmarshal(v, new(Record)) == nil }
