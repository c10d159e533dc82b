package engine

import (
	"reflect"
	"strings"

	"github.com/questbox/questbox/engine/store"
)

// scanNodeHead reads the fields of nodeHead from a node record, skipping
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
func scanNodeHead(raw []byte, h *nodeHead, like *nodeHead) bool {
	if like == nil {
		like = &nodeHead{}
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
			h.Status = Status(st)
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

// statusNames are the statuses' strings (Statuses), which scanNodeHead
// gives a head instead of a copy of its record's bytes.
var statusNames = func() []string {
	out := make([]string, len(Statuses))
	for i, st := range Statuses {
		out[i] = string(st)
	}
	return out
}()

// nodeKeys are the keys json.Marshal writes for a Node.
var nodeKeys = jsonKeys(reflect.TypeFor[Node]())

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

// scanEvidence reads the role and the evidence of a node record, for the
// owner's prompt, which passes over the locked nodes that have no
// evidence (dead ends, members) without decoding them; ok is false when
// raw is not a node record this scanner reads (decode it instead).
func scanEvidence(raw []byte) (role string, hasEvidence, ok bool) {
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

// scanStatus reads the status of a node record as it is stored (no
// running entry laid over it), for the owner's prompt, which passes over
// the locked nodes that are not blocked Teams without decoding them; ok
// is false when raw is not a node record this scanner reads (decode it
// instead).
func scanStatus(raw []byte) (st Status, ok bool) {
	var s string
	ok = store.ScanObject(raw, func(key []byte, sc *store.Scanner) bool {
		if string(key) == "status" {
			return sc.Str(&s)
		}
		return nodeKeys[string(key)] && sc.Skip()
	})
	return Status(s), ok
}
