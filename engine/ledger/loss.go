package ledger

import (
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/store"
)

// RecordLoss appends a SALVAGED record to the ledger when ledger records
// or locked nodes were lost, so that Verify can tell store damage, on
// record, from tampering. A lost ledger head is set to the last record.
//
// tailUnknown says the ledger's own sequence was lost: records after the
// last one found may have been lost without a trace, so a locked node
// whose record is missing is counted as lost too.
func RecordLoss(tx *store.Tx, now time.Time, nodes map[string]*domain.Node, rewritten []string, tailUnknown bool, out *[]string) error {
	meta := tx.Meta()
	lg := readLedgerGaps(tx.Ledger(), string(meta.Get(store.KeyLedgerHead)))
	if lg.head != "" && !lg.headFound {
		// The head names a record that was lost: records may be missing
		// after the last one found.
		tailUnknown = true
	}
	unproven := lg.unproven(nodes, tailUnknown)
	for _, id := range rewritten {
		// A locked node whose attempts were lost: its record is no
		// longer the one its ledger record hashed.
		if n := nodes[id]; n != nil && n.Status.Terminal() && !slices.Contains(unproven, id) {
			unproven = append(unproven, id)
		}
	}
	slices.Sort(unproven)
	if tailUnknown {
		*out = append(*out, "the ledger's sequence or its head was lost: records after the last one found may be lost too")
	}
	if err := lg.fixHead(meta, out); err != nil {
		return err
	}
	if len(lg.lost) == 0 && len(unproven) == 0 {
		return nil
	}
	r := Record{Time: now.UTC(), Outcome: OutcomeSalvaged, Lost: lg.lost, Unproven: unproven}
	if err := Append(tx, r); err != nil {
		return err
	}
	*out = append(*out, "the verdict ledger records the loss: "+Loss(r))
	return nil
}

// ledgerGaps is what RecordLoss reads of the ledger: the seq ranges
// missing, the last record's hash, each node's last record, and the head
// and whether a record has its hash.
type ledgerGaps struct {
	lost      [][2]uint64
	lastHash  string
	last      map[string]Record
	head      string
	headFound bool
}

func readLedgerGaps(lb *store.Bucket, head string) *ledgerGaps {
	lg := &ledgerGaps{last: map[string]Record{}, head: head}
	gap := func(from, to uint64) {
		if from <= to {
			lg.lost = append(lg.lost, [2]uint64{from, to})
		}
	}
	next := uint64(1)
	_ = lb.ForEach(func(k, v []byte) error {
		seq := store.SeqOf(k)
		gap(next, seq-1)
		next = seq + 1
		var r Record
		if json.Unmarshal(v, &r) == nil {
			lg.lastHash = r.Hash
			lg.headFound = lg.headFound || r.Hash == head
			if r.Node != "" {
				lg.last[r.Node] = r
			}
		}
		return nil
	})
	gap(next, lb.Sequence())
	return lg
}

// unproven lists the locked nodes the ledger can no longer prove: a
// terminal node whose locking record was lost, a node the ledger locked
// that is gone, or that came back older.
//
// A locked node with no locking record at all is unproven even when the
// ledger shows no gap: a torn write can bring back the ledger's pages,
// its sequence and its head all from an older commit and the node's page
// from a newer one, and nothing in the ledger then says a record is
// missing. A locking record that differs from the node is counted lost
// only when records were lost; otherwise it stays the ledger's to report.
func (lg *ledgerGaps) unproven(nodes map[string]*domain.Node, tailUnknown bool) []string {
	var out []string
	gaps := len(lg.lost) > 0 || tailUnknown
	for _, id := range slices.Sorted(maps.Keys(nodes)) {
		n := nodes[id]
		if !n.Status.Terminal() {
			continue
		}
		r, ok := lg.last[id]
		switch {
		case !ok || !r.Status.Terminal():
			out = append(out, id) // its locking record was lost
		case gaps && (r.Status != n.Status || r.ClaimHash != n.ClaimHash):
			out = append(out, id) // its locking record was lost; an older terminal one is left
		}
	}
	for _, id := range slices.Sorted(maps.Keys(lg.last)) {
		switch n := nodes[id]; {
		case !lg.last[id].Status.Terminal():
		case n == nil:
			out = append(out, id) // the node itself was lost
		case !n.Status.Terminal():
			out = append(out, id) // the record that locked it was lost; an older one came back
		}
	}
	slices.Sort(out)
	return out
}

// fixHead sets the ledger head to the last record found when it was lost
// with its page or read from a stale one (an older meta bucket names an
// older record as the head).
func (lg *ledgerGaps) fixHead(meta *store.Bucket, out *[]string) error {
	if lg.head == lg.lastHash || lg.lastHash == "" {
		return nil
	}
	if err := meta.Put(store.KeyLedgerHead, []byte(lg.lastHash)); err != nil {
		return err
	}
	switch {
	case lg.head == "":
		*out = append(*out, "the ledger head was lost: set to the last ledger record")
	case lg.headFound:
		*out = append(*out, "the ledger head named an older record (read from a stale page): set to the last ledger record")
	default:
		*out = append(*out, "the ledger head named a record that was lost: set to the last ledger record found")
	}
	return nil
}
