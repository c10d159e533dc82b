package records

import (
	"encoding/json"
	"reflect"
	"strings"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/store"
)

// ScanNodeHead reads the fields of NodeHead from a node record, skipping
// the rest (the attempt log, the answer) without decoding it: the tick
// reads the node of every quest it dispatches for, and encoding/json
// spends most of that time on what it then throws away. It returns false
// where encoding/json must decode instead (see store.ScanObject): a key
// that is not a Node key as written (encoding/json would match keys
// regardless of case), a value not in the form json.Marshal writes.
//
// The keys it skips are Node's own, read from its json tags (nodeKeys): a
// new field of Node needs nothing here unless the dispatch reads it.
//
// like, when not nil, is what the caller expects the record to hold: a
// string field that holds the same as like's is set to like's string
// instead of a copy of the record's bytes (a council's members, whose
// ids, quest, owner, role, hypothesis and provider their seats give). It
// changes no value read, only what is allocated; a status is always one
// of the engine's own strings when it is a known status.
func ScanNodeHead(raw []byte, h *NodeHead, like *NodeHead) bool {
	if like == nil {
		like = &NodeHead{}
	}
	return store.ScanObject(raw, func(key []byte, s *store.Scanner) bool {
		// A switch on the converted bytes compares without allocating.
		switch string(key) {
		case "id":
			return s.StrLike(&h.ID, like.ID)
		case "quest":
			return s.StrLike(&h.Quest, like.Quest)
		case "parent":
			return s.StrLike(&h.Parent, like.Parent)
		case "role":
			return s.StrLike(&h.Role, like.Role)
		case "hypothesis":
			return s.StrLike(&h.Hypothesis, like.Hypothesis)
		case "status":
			st := string(h.Status)
			ok := s.StrOf(&st, statusNames)
			h.Status = domain.Status(st)
			return ok
		case "feedback":
			return s.Str(&h.Feedback)
		case "provider":
			return s.StrLike(&h.Provider, like.Provider)
		case "depth":
			return s.Int(&h.Depth)
		case "tries":
			return s.Int(&h.Tries)
		case "order":
			return s.Uint(&h.Order)
		case "team":
			return s.Str(&h.Team)
		case "stage":
			return s.Str(&h.Stage)
		case "revision_count":
			return s.Int(&h.RevisionCount)
		case "max_revisions":
			return s.Int(&h.MaxRevisions)
		case "runs":
			return s.Count((*int)(&h.RunCount))
		}
		return nodeKeys[string(key)] && s.Skip()
	})
}

// statusNames are the statuses' strings (Statuses), which ScanNodeHead
// gives a head instead of a copy of its record's bytes.
var statusNames = func() []string {
	out := make([]string, len(domain.Statuses))
	for i, st := range domain.Statuses {
		out[i] = string(st)
	}
	return out
}()

// nodeKeys are the keys json.Marshal writes for a Node.
var nodeKeys = jsonKeys(reflect.TypeFor[domain.Node]())

// jsonKeys returns the JSON keys of the exported fields of struct type t.
func jsonKeys(t reflect.Type) map[string]bool {
	keys := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		keys[name] = true
	}
	return keys
}

// ScanEvidence reads the role and the evidence of a node record, for the
// owner's prompt, which passes over the locked nodes that have no
// evidence (dead ends, members) without decoding them; ok is false when
// raw is not a node record this scanner reads (decode it instead).
func ScanEvidence(raw []byte) (role string, hasEvidence, ok bool) {
	var ev string
	ok = store.ScanObject(raw, func(key []byte, s *store.Scanner) bool {
		switch string(key) {
		case "role":
			return s.Str(&role)
		case "evidence":
			return s.Str(&ev)
		}
		return nodeKeys[string(key)] && s.Skip()
	})
	return role, ev != "", ok
}

// ScanStatus reads the status of a node record as it is stored (no
// running entry laid over it), for the owner's prompt, which passes over
// the locked nodes that are not blocked Teams without decoding them; ok
// is false when raw is not a node record this scanner reads (decode it
// instead).
func ScanStatus(raw []byte) (st domain.Status, ok bool) {
	var s string
	ok = store.ScanObject(raw, func(key []byte, sc *store.Scanner) bool {
		if string(key) == "status" {
			return sc.Str(&s)
		}
		return nodeKeys[string(key)] && sc.Skip()
	})
	return domain.Status(s), ok
}

// NodeHead is what a dispatch needs of a node's record: its request and
// its run, not its attempt log or its answer, which decoding would cost
// most of the time of reading the node (the tick dispatches one per
// quest).
type NodeHead struct {
	ID         string        `json:"id"`
	Quest      string        `json:"quest"`
	Parent     string        `json:"parent"`
	Role       string        `json:"role"`
	Hypothesis string        `json:"hypothesis"`
	Status     domain.Status `json:"status"`
	Depth      int           `json:"depth"`
	Order      uint64        `json:"order"`
	Tries      int           `json:"tries"`
	Feedback   string        `json:"feedback"`
	// Provider is the node's own provider (a council member's seat),
	// which its dispatch needs.
	Provider string `json:"provider"`
	// A Team stage's own (engine/team.go): the judge and the prompt
	// read them.
	Team          string `json:"team"`
	Stage         string `json:"stage"`
	RevisionCount int    `json:"revision_count"`
	MaxRevisions  int    `json:"max_revisions"`
	// RunCount is how many runs the record lists, so that a dispatch
	// numbers its run without reading them (newRun).
	RunCount RunCount `json:"runs"`
}

// RunCount reads a JSON array as the number of values it holds.
type RunCount int

func (c *RunCount) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var runs []json.RawMessage
	if err := json.Unmarshal(b, &runs); err != nil {
		return err
	}
	*c = RunCount(len(runs))
	return nil
}
