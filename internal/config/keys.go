package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"

	"github.com/questbox/questbox/gates"
	"github.com/questbox/questbox/gates/judge"
)

// A path names one value of a file: the parts of its key, each with the
// index of the element when the part is an array of tables, as errors
// print it: gates.research.rules[1].level.
type path []step

type step struct {
	name string
	elem int // index into the array of tables name; -1 when name is not one
}

// with returns a new path: p, then name (element elem, or -1).
func (p path) with(name string, elem int) path {
	return append(p[:len(p):len(p)], step{name, elem})
}

// key is p without its indices.
func (p path) key() toml.Key {
	k := make(toml.Key, len(p))
	for i, s := range p {
		k[i] = s.name
	}
	return k
}

// indexed reports whether p goes through an element of an array of tables.
func (p path) indexed() bool {
	for _, s := range p {
		if s.elem >= 0 {
			return true
		}
	}
	return false
}

// within reports whether p is q or below it. An array of tables written
// without an index (gates.g.rules) has each of its elements below it.
func (p path) within(q path) bool {
	if len(q) > len(p) {
		return false
	}
	for i := range q {
		if p[i] != q[i] && !(i == len(q)-1 && p[i].name == q[i].name && q[i].elem < 0) {
			return false
		}
	}
	return true
}

// String quotes each part as TOML does (providers."My LLM") and appends
// the index of elements (gates.g.rules[0].id). [parseKey] reverses it.
func (p path) String() string {
	var b strings.Builder
	for i, s := range p {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(toml.Key{s.name}.String())
		if s.elem >= 0 {
			b.WriteString("[" + strconv.Itoa(s.elem) + "]")
		}
	}
	return b.String()
}

// parseKey reads a key as [path.String] writes it (the Key of an [*Error]).
func parseKey(s string) (path, bool) {
	var p path
	for s != "" {
		var name string
		if s[0] == '"' {
			end := 1
			for end < len(s) && s[end] != '"' {
				if s[end] == '\\' {
					end++
				}
				end++
			}
			if end >= len(s) {
				return nil, false
			}
			u, err := strconv.Unquote(s[:end+1])
			if err != nil {
				return nil, false
			}
			name, s = u, s[end+1:]
		} else {
			i := strings.IndexAny(s, ".[")
			if i < 0 {
				i = len(s)
			}
			name, s = s[:i], s[i:]
		}
		elem := -1
		if strings.HasPrefix(s, "[") {
			j := strings.IndexByte(s, ']')
			if j < 0 {
				return nil, false
			}
			n, err := strconv.Atoi(s[1:j])
			if err != nil || n < 0 {
				return nil, false
			}
			elem, s = n, s[j+1:]
		}
		p = append(p, step{name, elem})
		if s == "" {
			break
		}
		if s[0] != '.' || len(s) == 1 {
			return nil, false
		}
		s = s[1:]
	}
	return p, len(p) > 0
}

// anyName stands for the name of a provider, a gate profile or a rule
// parameter in the keys of [schema]: any name matches it.
const anyName = "NAME"

// TOML types as toml.MetaData.Type names them.
const (
	typeString      = "String"
	typeInteger     = "Integer"
	typeFloat       = "Float"
	typeBool        = "Bool"
	typeArray       = "Array"
	typeTable       = "Hash"
	typeArrayTables = "ArrayHash"
)

// wants phrases what a key of each TOML type takes, for error messages.
var wants = map[string]string{
	typeString:      "a string",
	typeInteger:     "an integer",
	typeFloat:       "a number",
	typeBool:        "a boolean (true or false)",
	typeArray:       "an array",
	typeTable:       "a table",
	typeArrayTables: "an array of tables",
}

// schema is every key a configuration file may have, with the TOML type
// its value takes. Unknown keys are found by the decoder itself
// (toml.MetaData.Undecoded); the schema only words the messages: what a
// key of the wrong type wants, which known key a misspelt one meant, and
// that a key written in another case (Tick) is not the key (tick) the
// decoder's case-insensitive match would quietly take it for.
type schema struct {
	types    map[string]string   // key (anyName for any name) -> TOML type
	elems    map[string]string   // array key -> its elements' TOML type
	children map[string][]string // key ("" for the top) -> names of its keys, in file order
	keys     []toml.Key          // every key, in file order
}

// knownKeys is the schema, derived once.
var knownKeys = sync.OnceValue(deriveSchema)

// deriveSchema encodes a sample [Config] that has every table and one of
// each named thing, and reads the keys back with their types: the toml tags
// of Config stay the one description of the file, read by the toml package,
// not by a walk of ours over the struct.
func deriveSchema() *schema {
	text, err := toml.Marshal(schemaSample())
	if err != nil {
		panic("BUG: config: cannot encode the schema sample: " + err.Error())
	}
	var tree map[string]any
	md, err := toml.Decode(string(text), &tree)
	if err != nil {
		panic("BUG: config: cannot decode the schema sample: " + err.Error())
	}
	s := &schema{types: map[string]string{}, elems: map[string]string{}, children: map[string][]string{}}
	for _, k := range md.Keys() {
		ks := k.String()
		if _, dup := s.types[ks]; dup {
			continue
		}
		s.types[ks] = md.Type(k...)
		s.keys = append(s.keys, k)
		parent := k[:len(k)-1].String()
		s.children[parent] = append(s.children[parent], k[len(k)-1])
		if a, ok := valueAt(tree, k).([]any); ok && len(a) > 0 {
			s.elems[ks] = tomlType(a[0])
		}
	}
	return s
}

// schemaSample is [Default] with what it leaves out: a [judge], one
// provider, one gate profile with one rule and one parameter, and an
// element in every array (so that the schema knows their elements' type).
func schemaSample() *Config {
	c := Default()
	c.Defaults.Checkpoints = []string{""}
	c.Council = Council{Reviewers: []string{""}, Judges: []string{""}}
	c.Judge = &judge.Config{}
	c.Teams = map[string]Team{anyName: {}}
	c.Providers[anyName] = Provider{Argv: []string{""}, Env: []string{""}, Write: []string{""}}
	c.Roles[anyName] = Role{}
	c.Privacy.Redact = []string{""}
	c.Gates[anyName] = GateProfile{Rules: []gates.RuleSpec{{
		Params: map[string]any{anyName: ""}, Attacks: []string{""}, Supersedes: []string{""},
	}}}
	return c
}

// valueAt is the value at k in a generic tree, going into the first
// element of arrays of tables; nil if there is none.
func valueAt(tree map[string]any, k toml.Key) any {
	var v any = tree
	for _, part := range k {
		if ts, ok := tables(v); ok && len(ts) > 0 {
			v = ts[0]
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[part]
	}
	return v
}

// lookup finds the schema key of p: its own name where the schema has it,
// anyName where that stands for a name. ok is false for a key the schema
// does not have.
func (s *schema) lookup(p path) (key string, ok bool) {
	k := make(toml.Key, 0, len(p))
	for _, st := range p {
		parent := k.String()
		switch names := s.children[parent]; {
		case slices.Contains(names, st.name):
			k = append(k, st.name)
		case slices.Contains(names, anyName):
			k = append(k, anyName)
		default:
			return "", false
		}
	}
	return k.String(), true
}

// fold finds the known key p means when it differs from one only in case
// (Daemon.Tick for daemon.tick), which the toml decoder would take for it.
// It returns p with the known spelling.
func (s *schema) fold(p path) (path, bool) {
	k := make(toml.Key, 0, len(p))
	fixed := make(path, len(p))
	changed := false
	for i, st := range p {
		names := s.children[k.String()]
		switch {
		case slices.Contains(names, st.name):
			k = append(k, st.name)
			fixed[i] = st
			continue
		case slices.Contains(names, anyName):
			k = append(k, anyName)
			fixed[i] = st
			continue
		}
		found := false
		for _, n := range names {
			if n != anyName && strings.EqualFold(n, st.name) {
				k = append(k, n)
				fixed[i] = step{n, st.elem}
				found, changed = true, true
				break
			}
		}
		if !found {
			return nil, false
		}
	}
	return fixed, changed
}

// suggest returns the known key closest to the unknown key p: a key of
// the same name in another table (`tick` at the top level suggests
// daemon.tick, defaults.max_parallel suggests daemon.max_parallel), else
// the sibling within a small edit distance, else the nearest key anywhere.
// "" if nothing is close.
func (s *schema) suggest(p path) string {
	parent, leaf := p[:len(p)-1], p[len(p)-1].name
	sibling := ""
	if pk, ok := s.lookup(parent); ok {
		sibling = Closest(leaf, slices.DeleteFunc(slices.Clone(s.children[pk]), func(n string) bool { return n == anyName }))
	}
	elsewhere, elsewhereD := "", maxDistance(leaf)+1
	for _, k := range s.keys {
		name := k[len(k)-1]
		if name == anyName {
			continue
		}
		if d := distance(leaf, name); d < elsewhereD {
			elsewhere, elsewhereD = k.String(), d
		}
	}
	switch {
	case elsewhereD == 0:
		return elsewhere
	case sibling != "":
		return parent.with(sibling, -1).String()
	}
	return elsewhere
}

// Closest returns the name among names nearest to word (by [distance]),
// when it is close enough to be worth a "did you mean": the one rule for
// suggestions, for config keys here and for the CLI's verbs. The first of
// equally near names wins; "" when none is near.
func Closest(word string, names []string) string {
	best, bestD := "", maxDistance(word)+1
	for _, name := range names {
		if d := distance(word, name); d < bestD {
			best, bestD = name, d
		}
	}
	return best
}

// maxDistance is the largest edit distance still worth a suggestion.
func maxDistance(s string) int { return max(1, len(s)/3) }

// distance is the optimal-string-alignment edit distance between a and b:
// insertions, deletions, substitutions and adjacent transpositions cost 1.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// tables returns v as an array of tables: [[x]] headers, or an inline
// array whose elements are all tables.
func tables(v any) ([]map[string]any, bool) {
	switch a := v.(type) {
	case []map[string]any:
		return a, true
	case []any:
		if len(a) == 0 {
			return nil, false
		}
		ts := make([]map[string]any, len(a))
		for i, e := range a {
			m, ok := e.(map[string]any)
			if !ok {
				return nil, false
			}
			ts[i] = m
		}
		return ts, true
	}
	return nil, false
}

// tomlType names the TOML type of a value of the generic tree.
func tomlType(v any) string {
	switch v.(type) {
	case string:
		return typeString
	case int64:
		return typeInteger
	case float64:
		return typeFloat
	case bool:
		return typeBool
	case map[string]any:
		return typeTable
	case []map[string]any:
		return typeArrayTables
	case []any:
		return typeArray
	}
	return fmt.Sprintf("%T", v)
}
