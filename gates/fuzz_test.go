package gates

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"testing"
	"unicode/utf8"
)

// The fuzz targets check ParseAnswer and ParseOwnerAnswer against an oracle
// written independently of json.go: it shares only the outer fence layer
// (locateJSON), then validates with json.Valid, a recursive token walk that
// detects duplicate keys, and the schema spelled out once more below.
// Seeds live in testdata/fuzz/<target>/.

func FuzzParseAnswer(f *testing.F) {
	f.Add([]byte(validJSON))
	f.Add([]byte(fence(validJSON)))
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, facts := ParseAnswer(raw) // must not panic
		checkFuzzFacts(t, facts)
		want, ok := oracleAnswer(raw)
		if ok != (len(facts) == 0) {
			t.Fatalf("got facts %v, want valid=%v per the oracle", facts, ok)
		}
		if !ok {
			if !reflect.DeepEqual(got, Answer{}) {
				t.Fatalf("got %+v with facts, want the zero Answer", got)
			}
			return
		}
		switch got.Verdict {
		case VerdictPromising, VerdictDead, VerdictConclusion:
		default:
			t.Fatalf("got verdict %q, want one of %s", got.Verdict, verdictSet)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %+v, want %+v", got, want)
		}
		if f := got.Validate(); len(f) != 0 {
			t.Fatalf("Validate: got %v, want none", f)
		}
		again, f2 := ParseAnswer(answerJSON(got))
		if len(f2) != 0 || !reflect.DeepEqual(again, got) {
			t.Fatalf("round trip: got %+v %v, want %+v", again, f2, got)
		}
	})
}

func FuzzParseOwnerAnswer(f *testing.F) {
	f.Add([]byte(validOwnerJSON))
	f.Add([]byte(fence(validOwnerJSON)))
	f.Add([]byte(ownerWith(`{"action":"promote","node":"n1"},{"action":"abort","node":"n1","reason":"r"}`)))
	f.Add([]byte(ownerWith(`{"action":"spawn","hypothesis":"h","role":"poc","summary":""}`)))
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, facts := ParseOwnerAnswer(raw)
		checkFuzzFacts(t, facts)
		want, ok := oracleOwner(raw)
		if ok != (len(facts) == 0) {
			t.Fatalf("got facts %v, want valid=%v per the oracle", facts, ok)
		}
		if !ok {
			if !reflect.DeepEqual(got, OwnerAnswer{}) {
				t.Fatalf("got %+v with facts, want the zero OwnerAnswer", got)
			}
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %+v, want %+v", got, want)
		}
		b, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		again, f2 := ParseOwnerAnswer(b)
		if len(f2) != 0 || !reflect.DeepEqual(again, got) {
			t.Fatalf("round trip: got %+v %v, want %+v", again, f2, got)
		}
	})
}

func checkFuzzFacts(t *testing.T, facts []Fact) {
	t.Helper()
	if len(facts) > maxFacts+1 {
		t.Fatalf("got %d facts, want at most %d", len(facts), maxFacts+1)
	}
	for _, f := range facts {
		if f.Rule != RuleContract || f.Level != Fail || f.Where == "" || f.Expected == "" || f.Actual == "" {
			t.Fatalf("got incomplete fact %#v", f)
		}
		if len(f.String()) > 1000 {
			t.Fatalf("got a %d-byte fact, want a short one", len(f.String()))
		}
	}
}

// node is the oracle's JSON tree; objects keep their members in order.
type node struct {
	kind    string // object, array, string, number, boolean, null
	str     string
	members []member
	items   []node
}

type member struct {
	name string
	val  node
}

var errDuplicate = errors.New("duplicate key")

// oracleTree parses one JSON object from text, refusing duplicates anywhere.
func oracleTree(raw []byte) (node, bool) {
	if len(raw) > MaxAnswerBytes {
		return node{}, false
	}
	var fs factList
	text, ok := locateJSON(raw, &fs)
	if !ok || !utf8.Valid(text) || !json.Valid(text) {
		return node{}, false
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	n, err := oracleValue(dec)
	if err != nil || n.kind != "object" {
		return node{}, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return node{}, false
	}
	return n, true
}

func oracleValue(dec *json.Decoder) (node, error) {
	tok, err := dec.Token()
	if err != nil {
		return node{}, err
	}
	switch v := tok.(type) {
	case json.Delim:
		if v == '[' {
			n := node{kind: "array"}
			for dec.More() {
				item, err := oracleValue(dec)
				if err != nil {
					return node{}, err
				}
				n.items = append(n.items, item)
			}
			_, err := dec.Token()
			return n, err
		}
		n := node{kind: "object"}
		seen := map[string]bool{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return node{}, err
			}
			name := k.(string)
			if seen[name] {
				return node{}, errDuplicate
			}
			seen[name] = true
			val, err := oracleValue(dec)
			if err != nil {
				return node{}, err
			}
			n.members = append(n.members, member{name, val})
		}
		_, err := dec.Token()
		return n, err
	case string:
		return node{kind: "string", str: v}, nil
	case bool:
		return node{kind: "boolean"}, nil
	case nil:
		return node{kind: "null"}, nil
	default:
		return node{kind: "number"}, nil
	}
}

// fields returns an object's members by name if exactly the names in
// required (all present) and optional (maybe present) occur, all strings
// except those listed in arrays.
func fields(n node, required, optional []string, arrays ...string) (map[string]node, bool) {
	if n.kind != "object" {
		return nil, false
	}
	m := map[string]node{}
	allowed := map[string]bool{}
	for _, s := range append(append([]string{}, required...), optional...) {
		allowed[s] = true
	}
	isArray := map[string]bool{}
	for _, a := range arrays {
		isArray[a] = true
	}
	for _, mb := range n.members {
		if !allowed[mb.name] {
			return nil, false
		}
		want := "string"
		if isArray[mb.name] {
			want = "array"
		}
		if mb.val.kind != want {
			return nil, false
		}
		m[mb.name] = mb.val
	}
	for _, r := range required {
		if _, ok := m[r]; !ok {
			return nil, false
		}
	}
	return m, true
}

func blank(s string) bool { return len(bytes.TrimSpace([]byte(s))) == 0 }

func oracleAnswer(raw []byte) (Answer, bool) {
	root, ok := oracleTree(raw)
	if !ok {
		return Answer{}, false
	}
	m, ok := fields(root, []string{"verdict", "evidence", "citations", "new_directions"}, nil, "citations", "new_directions")
	if !ok {
		return Answer{}, false
	}
	a := Answer{Verdict: m["verdict"].str, Evidence: m["evidence"].str, Citations: []Citation{}, NewDirections: []string{}}
	if a.Verdict != "promising" && a.Verdict != "dead" && a.Verdict != "conclusion" {
		return Answer{}, false
	}
	if len(m["citations"].items) > MaxListItems || len(m["new_directions"].items) > MaxListItems {
		return Answer{}, false
	}
	for _, c := range m["citations"].items {
		cm, ok := fields(c, []string{"source", "quote"}, nil)
		if !ok || blank(cm["source"].str) || blank(cm["quote"].str) {
			return Answer{}, false
		}
		a.Citations = append(a.Citations, Citation{Source: cm["source"].str, Quote: cm["quote"].str})
	}
	for _, d := range m["new_directions"].items {
		if d.kind != "string" || blank(d.str) {
			return Answer{}, false
		}
		a.NewDirections = append(a.NewDirections, d.str)
	}
	return a, true
}

func oracleOwner(raw []byte) (OwnerAnswer, bool) {
	root, ok := oracleTree(raw)
	if !ok {
		return OwnerAnswer{}, false
	}
	m, ok := fields(root, []string{"evidence", "actions"}, nil, "actions")
	if !ok {
		return OwnerAnswer{}, false
	}
	items := m["actions"].items
	if len(items) == 0 || len(items) > MaxListItems {
		return OwnerAnswer{}, false
	}
	o := OwnerAnswer{Evidence: m["evidence"].str}
	nodes := map[string]bool{}
	finishes := 0
	for _, it := range items {
		if it.kind != "object" {
			return OwnerAnswer{}, false
		}
		kind := ""
		for _, mb := range it.members {
			if mb.name == "action" {
				kind = mb.val.str
			}
		}
		var required []string
		switch kind {
		case "promote":
			required = []string{"action", "node"}
		case "abort":
			required = []string{"action", "node", "reason"}
		case "spawn":
			required = []string{"action", "hypothesis", "role"}
		case "finish":
			required = []string{"action", "summary"}
			finishes++
		default:
			return OwnerAnswer{}, false
		}
		var optional []string
		if kind != "abort" {
			optional = []string{"reason"}
		}
		am, ok := fields(it, required, optional)
		if !ok {
			return OwnerAnswer{}, false
		}
		for _, r := range required {
			if blank(am[r].str) {
				return OwnerAnswer{}, false
			}
		}
		if r, has := am["reason"]; has && r.str != "" && blank(r.str) {
			return OwnerAnswer{}, false
		}
		a := Action{Action: kind, Node: am["node"].str, Reason: am["reason"].str,
			Hypothesis: am["hypothesis"].str, Role: am["role"].str, Summary: am["summary"].str}
		if kind == "promote" || kind == "abort" {
			key := string(bytes.TrimSpace([]byte(a.Node)))
			if nodes[key] {
				return OwnerAnswer{}, false
			}
			nodes[key] = true
		}
		o.Actions = append(o.Actions, a)
	}
	if finishes > 1 {
		return OwnerAnswer{}, false
	}
	return o, true
}
