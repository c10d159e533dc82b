package ledger

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/store"
)

// Chain is what reading the ledger's chain found (ReadChain): its records
// and links, what salvage recorded as lost, and each node's last record,
// against which the engine's Verify checks the locked nodes.
type Chain struct {
	Records int
	// Problems are the records rewritten or out of their place; Rotten
	// the records that do not decode (store damage, which salvage drops
	// and records); Notes what salvage recorded.
	Problems, Rotten, Notes []string
	// Last is each node's last record.
	Last map[string]Last
	// Lost are the ledger seqs salvage recorded as lost, Unproven the
	// locked nodes it recorded as no longer provable.
	Lost     [][2]uint64
	Unproven map[string]bool
	// Prev is the last record's hash; Unknown says that it did not
	// decode (its hash unknown).
	Prev    string
	Unknown bool
	// breaks are the links that do not match the record before.
	breaks []chainBreak
}

// ReadChain reads the ledger's chain in tx: every record in order, each
// checked for its seq and its own hash, then every link but those across
// records a salvage recorded as lost.
func ReadChain(tx *store.Tx) Chain {
	c := Chain{Last: map[string]Last{}, Unproven: map[string]bool{}}
	c.chain(tx)
	c.links()
	return c
}

// Problem adds a problem found.
func (c *Chain) Problem(format string, args ...any) {
	c.Problems = append(c.Problems, fmt.Sprintf(format, args...))
}

// Last is what the chain check keeps of a node's last record.
type Last struct {
	Seq       uint64
	Status    domain.Status
	ClaimHash string
	NodeHash  string
}

// chainBreak is a link that does not match the record before.
type chainBreak struct{ seq, after uint64 }

// chain reads every ledger record in order: each must decode, carry its
// seq and its own hash; the links are kept for links, the losses salvage
// recorded, and each node's last record.
func (c *Chain) chain(tx *store.Tx) {
	var prevSeq uint64
	cur := tx.Ledger().Cursor()
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
		seq := store.SeqOf(k)
		var r Record
		if err := json.Unmarshal(v, &r); err != nil {
			c.Rotten = append(c.Rotten, fmt.Sprintf("ledger record %d does not decode (%v)", seq, err))
			c.Unknown, prevSeq = true, seq
			continue
		}
		if r.Seq != seq {
			c.Problem("ledger record %d claims seq %d", seq, r.Seq)
		}
		if !c.Unknown && r.Prev != c.Prev {
			c.breaks = append(c.breaks, chainBreak{seq, prevSeq})
		}
		sound := r.Digest() == r.Hash
		if !sound {
			c.Problem("ledger record %d (node %s): hash mismatch, the record was rewritten", seq, r.Node)
		}
		if r.Outcome == OutcomeSalvaged && sound {
			c.Lost = append(c.Lost, r.Lost...)
			for _, id := range r.Unproven {
				c.Unproven[id] = true
			}
			c.Notes = append(c.Notes, fmt.Sprintf("salvage (ledger record %d, %s) recorded store damage: %s", seq, r.Time.Format(time.RFC3339), Loss(r)))
		}
		c.Prev, prevSeq, c.Unknown = r.Hash, seq, false
		if r.Node != "" {
			c.Last[r.Node] = Last{Seq: seq, Status: r.Status, ClaimHash: r.ClaimHash, NodeHash: r.NodeHash}
		}
		c.Records++
	}
}

// links reports every broken link but those across records a salvage
// recorded as lost.
func (c *Chain) links() {
	covered := func(from, to uint64) bool { // every seq in [from, to] was recorded lost
		for s := from; s <= to; s++ {
			if !slices.ContainsFunc(c.Lost, func(g [2]uint64) bool { return g[0] <= s && s <= g[1] }) {
				return false
			}
		}
		return true
	}
	for _, b := range c.breaks {
		if b.seq > b.after+1 && covered(b.after+1, b.seq-1) {
			continue // the records in between were lost, and salvage said so
		}
		c.Problem("ledger record %d: link to previous record broken", b.seq)
	}
}

// Loss describes what a SALVAGED record says was lost.
func Loss(r Record) string {
	var parts []string
	if len(r.Lost) > 0 {
		var rs []string
		for _, g := range r.Lost {
			if g[0] == g[1] {
				rs = append(rs, fmt.Sprint(g[0]))
			} else {
				rs = append(rs, fmt.Sprintf("%d-%d", g[0], g[1]))
			}
		}
		parts = append(parts, "ledger records "+strings.Join(rs, ", ")+" were lost")
	}
	if len(r.Unproven) > 0 {
		parts = append(parts, "locked nodes "+strings.Join(r.Unproven, ", ")+" can no longer be proven (their record, their ledger record or their older attempts were lost)")
	}
	if len(parts) == 0 {
		return "no ledger record or locked node was lost"
	}
	return strings.Join(parts, "; ")
}
