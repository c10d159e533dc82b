package engine

import (
	"time"

	"github.com/questbox/questbox/engine/export"
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
	return ledger.RecordLoss(tx, now, nodes, rewritten, tailUnknown, out)
}

// ExportLockSeq is the highest lock sequence an export's state v has
// counted (export.LockSeq).
func (rebuildRules) ExportLockSeq(v []byte) (uint64, bool) { return export.LockSeq(v) }

// recordDecodes says whether record v of the record bucket name decodes
// (records.RecordDecodes), the ledger's records as the ledger reads them.
func recordDecodes(name string, v []byte) bool { return records.RecordDecodes(name, v, ledger.Decodes) }

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
