package engine

import (
	"encoding/json"

	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
)

// probes recognise the engine's records on the pages a salvage cannot
// reach through the tree (store.Probe): the records layer's, and the
// verdict ledger's own.
var probes = records.Probes(store.Probe{Bucket: bLedger, Match: func(k, v []byte) bool {
	// A copy whose hash does not hold is no copy of a record.
	var r LedgerRecord
	return len(k) == 8 && json.Unmarshal(v, &r) == nil && r.Seq == seqOf(k) && len(r.Hash) == 64 && r.Digest() == r.Hash
}})
