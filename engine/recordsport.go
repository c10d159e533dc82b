package engine

import (
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
)

// The records layer (engine/records) under the names that the files of
// the concerns moving out of package engine on their own (the ledger and
// its export, councils, phase gates, Teams, consent, verdicts, prompts,
// material, redaction) still call, so that each move merges apart from
// this one. A name goes once no file of package engine calls it: the
// records layer is called by its own names (records.ReadNode, ...).

func isGroup(v []byte) bool            { return records.IsGroup(v) }
func groupKey(v []byte) (uint64, bool) { return records.GroupKey(v) }
func checkGroup(k, v []byte) error     { return records.CheckGroup(k, v) }

func decodeQuest(raw []byte, q *Quest) error { return records.DecodeQuest(raw, q) }
func scanStatus(raw []byte) (Status, bool)   { return records.ScanStatus(raw) }
func scanEvidence(raw []byte) (role string, hasEvidence, ok bool) {
	return records.ScanEvidence(raw)
}

// nodeHead is what a dispatch reads of a node's record (records.NodeHead).
type nodeHead = records.NodeHead

func checkChains(tx *store.Tx) []string { return records.CheckChains(tx) }

func setRunning(n *Node, run []byte) { records.SetRunning(n, run) }

func readNode(tx *store.Tx, id string) (*Node, error)       { return records.ReadNode(tx, id) }
func readNodeRecord(tx *store.Tx, id string) (*Node, error) { return records.ReadNodeRecord(tx, id) }
func readNodeLog(tx *store.Tx, id string) (*Node, error)    { return records.ReadNodeLog(tx, id) }
func nodeKey(id string) ([]byte, error)                     { return records.NodeKey(id) }
func getRun(tx *store.Tx, id, quest, node string) (Run, bool, error) {
	return records.GetRun(tx, id, quest, node)
}
