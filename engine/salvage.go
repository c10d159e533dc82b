package engine

import (
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/questbox/questbox/engine/ledger"
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
)

// What the engine's rules add to a salvage's rebuild of the records
// (records.Rebuild, engine/records/repair.go): how a running entry and a
// status count in a quest, the hypotheses' keys, the evidence index, the
// exports' cursors, and the verdict ledger's part: its records' check and
// the SALVAGED record of what was lost.

// rebuild derives again, inside tx, what the engine keeps in step with
// the records a salvage copied (records.Rebuild), by the engine's rules.
func rebuild(tx *store.Tx, now time.Time, seqKnown func(bucket []byte) bool) ([]string, error) {
	return records.Rebuild(tx, now, seqKnown, SchemaVersion, ProviderExternal, rebuildRules{})
}

// rebuildRules are the engine's rules a rebuild asks (records.Rules).
type rebuildRules struct{}

var _ records.Rules = rebuildRules{}

func (rebuildRules) ApplyEntry(q *Quest, base uint64, node, v []byte) { applyEntry(q, base, node, v) }
func (rebuildRules) TrackQueued(q *Quest, n *Node, to Status)         { trackQueued(q, n, to) }
func (rebuildRules) HypKey(h string) []byte                           { return hypKey(h) }
func (rebuildRules) ShownEvidence(n *Node) bool                       { return shownEvidence(n) }
func (rebuildRules) RecordDecodes(name string, v []byte) bool         { return recordDecodes(name, v) }
func (rebuildRules) RecordLoss(tx *store.Tx, now time.Time, nodes map[string]*Node, rewritten []string, tailUnknown bool, out *[]string) error {
	return recordLoss(tx, now, nodes, rewritten, tailUnknown, out)
}

// ExportLockSeq is the highest lock sequence an export's state v has
// counted (its cursor, or the export it has pending).
func (rebuildRules) ExportLockSeq(v []byte) (uint64, bool) {
	var st exportState
	if json.Unmarshal(v, &st) != nil {
		return 0, false
	}
	seq := st.Cursor
	if st.Pending != nil {
		seq = max(seq, st.Pending.Upto)
	}
	return seq, true
}

// recordDecodes says whether record v of the record bucket name decodes
// (store.ForInvalid): JSON, quests in their codec, ledger records as
// Verify reads them, event groups and attempt records in their binary
// forms.
func recordDecodes(name string, v []byte) bool {
	switch {
	case name == string(bQuests):
		return records.DecodeQuest(v, new(Quest)) == nil
	case name == string(bLedger):
		// Verify decodes every ledger record (a time that does not parse
		// is as damaged as a broken brace): so must what salvage keeps.
		return json.Valid(v) && json.Unmarshal(v, new(LedgerRecord)) == nil
	case name == string(bEvents) && records.IsGroup(v):
		first, ok := records.GroupKey(v)
		return ok && records.CheckGroup(u64(first), v) == nil
	case name == string(bAttempts):
		_, err := records.DecodeAttemptRecord(v)
		return err == nil
	}
	return json.Valid(v)
}

// invalidRecords names every record of the record buckets that does not
// decode.
func invalidRecords(tx *store.Tx) []string { return store.InvalidRecords(tx, recordDecodes) }

// damagedRecords is what salvage repairs in a store whose pages are
// sound: records that do not decode, and a locked index out of step with
// the nodes (an index page from another commit; rebuild derives every
// index again).
func damagedRecords(tx *store.Tx) []string {
	return append(append(invalidRecords(tx), records.CheckChains(tx)...), checkLedger(tx, SchemaVersion).Index...)
}

// recordLoss appends a SALVAGED record to the ledger when ledger records
// or locked nodes were lost, so that Verify can tell store damage, on
// record, from tampering. A lost ledger head is set to the last record.
//
// tailUnknown says the ledger's own sequence was lost: records after the
// last one found may have been lost without a trace, so a locked node
// whose record is missing is counted as lost too.
func recordLoss(tx *store.Tx, now time.Time, nodes map[string]*Node, rewritten []string, tailUnknown bool, out *[]string) error {
	meta := tx.Meta()
	lg := readLedgerGaps(tx.Ledger(), string(meta.Get(kLedgerHead)))
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
	r := LedgerRecord{Time: now.UTC(), Outcome: OutcomeSalvaged, Lost: lg.lost, Unproven: unproven}
	if err := ledger.Append(tx, r); err != nil {
		return err
	}
	*out = append(*out, "the verdict ledger records the loss: "+ledger.Loss(r))
	return nil
}

// ledgerGaps is what recordLoss reads of the ledger: the seq ranges
// missing, the last record's hash, each node's last record, and the head
// and whether a record has its hash.
type ledgerGaps struct {
	lost      [][2]uint64
	lastHash  string
	last      map[string]LedgerRecord
	head      string
	headFound bool
}

func readLedgerGaps(lb *store.Bucket, head string) *ledgerGaps {
	lg := &ledgerGaps{last: map[string]LedgerRecord{}, head: head}
	gap := func(from, to uint64) {
		if from <= to {
			lg.lost = append(lg.lost, [2]uint64{from, to})
		}
	}
	next := uint64(1)
	_ = lb.ForEach(func(k, v []byte) error {
		seq := seqOf(k)
		gap(next, seq-1)
		next = seq + 1
		var r LedgerRecord
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
func (lg *ledgerGaps) unproven(nodes map[string]*Node, tailUnknown bool) []string {
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
	if err := meta.Put(kLedgerHead, []byte(lg.lastHash)); err != nil {
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
