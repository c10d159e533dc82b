package engine

import (
	"encoding/json"
	"time"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
)

// probes recognise the engine's records on the pages a salvage cannot
// reach through the tree (store.Probe).
var probes = []store.Probe{
	{Bucket: bLedger, Match: func(k, v []byte) bool {
		// A copy whose hash does not hold is no copy of a record.
		var r LedgerRecord
		return len(k) == 8 && json.Unmarshal(v, &r) == nil && r.Seq == seqOf(k) && len(r.Hash) == 64 && r.Digest() == r.Hash
	}},
	{Bucket: bEvents, Match: func(k, v []byte) bool {
		if records.IsGroup(v) {
			return records.CheckGroup(k, v) == nil // its checksum and its key hold
		}
		var ev struct {
			Seq  uint64 `json:"seq"`
			Kind string `json:"kind"`
		}
		return len(k) == 8 && json.Unmarshal(v, &ev) == nil && ev.Seq == seqOf(k) && ev.Kind != ""
	}},
	{Bucket: bNodes, Match: func(k, v []byte) bool {
		var n struct {
			ID    string `json:"id"`
			Order uint64 `json:"order"`
			Quest string `json:"quest"`
		}
		return len(k) == 8 && json.Unmarshal(v, &n) == nil && n.Order == seqOf(k) && n.ID == domain.NodeID(n.Order) && n.Quest != ""
	}, Newer: func(a, b []byte) bool {
		// A node only moves forward: later saves, more attempts, locked.
		var x, y struct {
			Updated  time.Time         `json:"updated"`
			Attempts []json.RawMessage `json:"attempts"`
			Count    int               `json:"attempt_count"`
			Status   Status            `json:"status"`
		}
		json.Unmarshal(a, &x)
		json.Unmarshal(b, &y)
		if !x.Updated.Equal(y.Updated) {
			return x.Updated.After(y.Updated)
		}
		if xc, yc := max(x.Count, len(x.Attempts)), max(y.Count, len(y.Attempts)); xc != yc {
			return xc > yc
		}
		return x.Status.Terminal() && !y.Status.Terminal()
	}},
	{Bucket: bQuests, Match: func(k, v []byte) bool {
		var q Quest
		return records.DecodeQuest(v, &q) == nil && q.ID == string(k) && records.IDNumber(q.ID, 'q') > 0 && q.Direction != ""
	}, Newer: func(a, b []byte) bool {
		var x, y Quest
		records.DecodeQuest(a, &x)
		records.DecodeQuest(b, &y)
		return x.Updated.After(y.Updated)
	}},
	{Bucket: bRuns, Match: func(k, v []byte) bool {
		var r struct {
			ID   string `json:"id"`
			Node string `json:"node"`
		}
		return json.Unmarshal(v, &r) == nil && r.ID == string(k) && records.IDNumber(r.ID, 'r') > 0 && r.Node != ""
	}, Newer: func(a, b []byte) bool {
		var x, y struct {
			Ended time.Time `json:"ended"`
		}
		json.Unmarshal(a, &x)
		json.Unmarshal(b, &y)
		return x.Ended.After(y.Ended)
	}},
	{Bucket: bAttempts, Match: func(k, v []byte) bool {
		// Never rewritten but by salvage (repairChains), which keeps the
		// newer copy in the tree.
		_, err := records.DecodeAttemptRecord(v)
		return len(k) == 8 && seqOf(k) > 0 && err == nil
	}},
	{Bucket: bEdges, Match: func(k, v []byte) bool {
		var e Edge
		return len(k) == 8 && seqOf(k) > 0 && json.Unmarshal(v, &e) == nil && records.IDNumber(e.From, 'n') > 0 && records.IDNumber(e.To, 'n') > 0 && edgeRelation(e.Relation)
	}, Nest: func(v []byte, lookup func(bucket, key []byte) []byte) string {
		// An edge's quest is its nodes' quest.
		var e Edge
		var n struct {
			Quest string `json:"quest"`
		}
		if json.Unmarshal(v, &e) != nil || json.Unmarshal(lookup(bNodes, u64(records.IDNumber(e.From, 'n'))), &n) != nil {
			return ""
		}
		return n.Quest
	}},
}

// edgeRelation reports whether rel is one of the relations an edge may have,
// those of the plain graph and those of councils and Teams (docs/design.md,
// "Quests, nodes and edges").
func edgeRelation(rel string) bool {
	switch rel {
	case EdgeSpawned, EdgeGrewTo, EdgeAbortedTo, EdgeProposedFrom, EdgePromoted,
		EdgeCouncilOf, EdgeCouncilReply, EdgeStagesInto, EdgeMakesPlan, EdgeExecutes, EdgeRejectsTo, EdgeAcceptsTo:
		return true
	}
	return false
}
