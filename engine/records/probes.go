package records

import (
	"encoding/json"
	"time"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/store"
)

// Probes recognise the domain's records on the pages a salvage cannot
// reach through the tree (store.Probe): ledger is the verdict ledger's
// probe, which the ledger knows, the others the records'.
func Probes(ledger store.Probe) []store.Probe {
	return append([]store.Probe{ledger}, probes...)
}

// probes are Probes' but the ledger's, in the order salvage asks them.
var probes = []store.Probe{
	{Bucket: store.Events, Match: func(k, v []byte) bool {
		if IsGroup(v) {
			return CheckGroup(k, v) == nil // its checksum and its key hold
		}
		var ev struct {
			Seq  uint64 `json:"seq"`
			Kind string `json:"kind"`
		}
		return len(k) == 8 && json.Unmarshal(v, &ev) == nil && ev.Seq == store.SeqOf(k) && ev.Kind != ""
	}},
	{Bucket: store.Nodes, Match: func(k, v []byte) bool {
		var n struct {
			ID    string `json:"id"`
			Order uint64 `json:"order"`
			Quest string `json:"quest"`
		}
		return len(k) == 8 && json.Unmarshal(v, &n) == nil && n.Order == store.SeqOf(k) && n.ID == domain.NodeID(n.Order) && n.Quest != ""
	}, Newer: func(a, b []byte) bool {
		// A node only moves forward: later saves, more attempts, locked.
		var x, y struct {
			Updated  time.Time         `json:"updated"`
			Attempts []json.RawMessage `json:"attempts"`
			Count    int               `json:"attempt_count"`
			Status   domain.Status     `json:"status"`
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
	{Bucket: store.Quests, Match: func(k, v []byte) bool {
		var q domain.Quest
		return DecodeQuest(v, &q) == nil && q.ID == string(k) && IDNumber(q.ID, 'q') > 0 && q.Direction != ""
	}, Newer: func(a, b []byte) bool {
		var x, y domain.Quest
		DecodeQuest(a, &x)
		DecodeQuest(b, &y)
		return x.Updated.After(y.Updated)
	}},
	{Bucket: store.Runs, Match: func(k, v []byte) bool {
		var r struct {
			ID   string `json:"id"`
			Node string `json:"node"`
		}
		return json.Unmarshal(v, &r) == nil && r.ID == string(k) && IDNumber(r.ID, 'r') > 0 && r.Node != ""
	}, Newer: func(a, b []byte) bool {
		var x, y struct {
			Ended time.Time `json:"ended"`
		}
		json.Unmarshal(a, &x)
		json.Unmarshal(b, &y)
		return x.Ended.After(y.Ended)
	}},
	{Bucket: store.Attempts, Match: func(k, v []byte) bool {
		// Never rewritten but by salvage (repairChains), which keeps the
		// newer copy in the tree.
		_, err := DecodeAttemptRecord(v)
		return len(k) == 8 && store.SeqOf(k) > 0 && err == nil
	}},
	{Bucket: store.Edges, Match: func(k, v []byte) bool {
		var e domain.Edge
		return len(k) == 8 && store.SeqOf(k) > 0 && json.Unmarshal(v, &e) == nil && IDNumber(e.From, 'n') > 0 && IDNumber(e.To, 'n') > 0 && EdgeRelation(e.Relation)
	}, Nest: func(v []byte, lookup func(bucket, key []byte) []byte) string {
		// An edge's quest is its nodes' quest.
		var e domain.Edge
		var n struct {
			Quest string `json:"quest"`
		}
		if json.Unmarshal(v, &e) != nil || json.Unmarshal(lookup(store.Nodes, store.U64(IDNumber(e.From, 'n'))), &n) != nil {
			return ""
		}
		return n.Quest
	}},
}

// EdgeRelation reports whether rel is one of the relations an edge may have,
// those of the plain graph and those of councils and Teams (docs/design.md,
// "Quests, nodes and edges").
func EdgeRelation(rel string) bool {
	switch rel {
	case domain.EdgeSpawned, domain.EdgeGrewTo, domain.EdgeAbortedTo, domain.EdgeProposedFrom, domain.EdgePromoted,
		domain.EdgeCouncilOf, domain.EdgeCouncilReply, domain.EdgeStagesInto, domain.EdgeMakesPlan, domain.EdgeExecutes, domain.EdgeRejectsTo, domain.EdgeAcceptsTo:
		return true
	}
	return false
}
