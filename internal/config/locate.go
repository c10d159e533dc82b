package config

import (
	"errors"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// locator finds where a key is written in a file. toml.MetaData records
// the position of every key it parses but does not export it; it reports
// it in the toml.ParseError of a value that refuses to be decoded. So the
// locator walks down to a key through toml.Primitive values and decodes
// the key's own value into [refuse], which always refuses.
//
// The position is the one the decoder keeps: that of the value for a
// "key = value" line, that of the header for a [table]. Below an array of
// tables the decoder keeps only the last element's, so for any other
// element the locator cuts the text before the next element's [[header]]
// and looks again, there.
type locator struct {
	text string
	md   toml.MetaData
	top  map[string]toml.Primitive // nil when text does not decode
	cuts map[string][]int          // headers, by array key
}

func newLocator(text string) *locator {
	l := &locator{text: text}
	md, err := toml.Decode(text, &l.top)
	if err != nil {
		l.top = nil
	}
	l.md = md
	return l
}

// refuse is a TOML value that refuses whatever it is given.
type refuse struct{}

var errRefused = errors.New("refused")

func (refuse) UnmarshalTOML(any) error { return errRefused }

// at is the position the decoder recorded for prim's key; Line is 0 when
// it recorded none (a table only implied by a dotted key or a deeper
// header).
func (l *locator) at(prim toml.Primitive) toml.Position {
	var pe toml.ParseError
	if errors.As(l.md.PrimitiveDecode(prim, &refuse{}), &pe) {
		return pe.Position
	}
	return toml.Position{}
}

// first is the earliest recorded position of a key below prim, for a table
// that has none of its own.
func (l *locator) first(prim toml.Primitive) toml.Position {
	var m map[string]toml.Primitive
	if l.md.PrimitiveDecode(prim, &m) != nil {
		return toml.Position{}
	}
	var best toml.Position
	for _, child := range m {
		pos := l.at(child)
		if pos.Line == 0 {
			pos = l.first(child)
		}
		if pos.Line > 0 && (best.Line == 0 || pos.Start < best.Start) {
			best = pos
		}
	}
	return best
}

// find returns where p is written, and whether that is p's own position.
// For a key the file leaves out it is the position of the nearest written
// table above it, and for a table written only as part of longer keys that
// of its first key; own is false for both.
func (l *locator) find(p path) (pos toml.Position, own bool) {
	if l.top == nil || len(p) == 0 {
		return toml.Position{}, false
	}
	var best toml.Position
	m := l.top
	for i, s := range p {
		prim, ok := m[s.name]
		if !ok {
			return best, false
		}
		var done bool
		if s.elem < 0 {
			m, best, own, done = l.tableSegment(p, i, prim, best)
		} else {
			m, best, own, done = l.elementSegment(p, i, prim, best)
		}
		if done {
			return best, own
		}
	}
	return best, false
}

// tableSegment is find's step through p[i], a table or a key (prim):
// best becomes its position where it has one, and either find is done
// (own as find returns it) or next is the table of p[i+1].
func (l *locator) tableSegment(p path, i int, prim toml.Primitive, best toml.Position) (next map[string]toml.Primitive, _ toml.Position, own, done bool) {
	pos := l.at(prim)
	last := i == len(p)-1
	implied := pos.Line == 0
	if implied {
		pos = l.first(prim)
	}
	if last && l.md.Type(p.key()...) == typeArrayTables {
		// The array as a whole: where its first element is.
		if offs := l.headers(p); len(offs) > 0 {
			pos = toml.Position{Line: 1 + strings.Count(l.text[:offs[0]], "\n"), Start: offs[0]}
		}
	}
	if pos.Line > 0 {
		best = pos
	}
	if last {
		return nil, best, !implied && pos.Line > 0, true
	}
	if l.md.PrimitiveDecode(prim, &next) != nil {
		return nil, best, false, true
	}
	return next, best, false, false
}

// elementSegment is find's step through p[i], an element of an array
// (prim), as tableSegment is through a table.
func (l *locator) elementSegment(p path, i int, prim toml.Primitive, best toml.Position) (next map[string]toml.Primitive, _ toml.Position, own, done bool) {
	s := p[i]
	var elems []map[string]toml.Primitive
	if l.md.PrimitiveDecode(prim, &elems) != nil || s.elem >= len(elems) {
		return nil, best, false, true
	}
	later := elems[s.elem+1:]
	headers := l.md.Type(p[:i+1].key()...) == typeArrayTables
	if len(later) > 0 && headers {
		if offs := l.headers(p[:i+1]); len(offs) == len(elems) {
			pos, own := newLocator(l.text[:offs[s.elem+1]]).find(p)
			return nil, pos, own, true
		}
	}
	// pos is the last element's [[header]], or where an inline array
	// starts (its elements have no position of their own).
	pos := l.at(prim)
	own = headers && len(later) == 0
	if pos.Line > 0 && (own || !headers) {
		best = pos
	}
	if i == len(p)-1 {
		return nil, best, own, true
	}
	for _, e := range later {
		if _, shared := e[p[i+1].name]; shared {
			return nil, best, false, true // recorded for a later element
		}
	}
	return elems[s.elem], best, false, false
}

// headers are the offsets of the [[header]] of each element of the array
// of tables arr, first to last, or nil. The decoder records the last
// element's; the text cut before it has one element fewer, whose last
// header is the one before, and so on.
func (l *locator) headers(arr path) []int {
	if arr[:len(arr)-1].indexed() {
		return nil // no array of tables in an array of tables in this schema
	}
	key := arr.key().String()
	if offs, ok := l.cuts[key]; ok {
		return offs
	}
	var offs []int
	for loc, n := l, -1; ; {
		prim, ok := loc.lookup(arr.key())
		if !ok {
			offs = nil
			break
		}
		var elems []map[string]toml.Primitive
		pos := loc.at(prim)
		if loc.md.PrimitiveDecode(prim, &elems) != nil || pos.Line == 0 || pos.Start >= len(loc.text) ||
			(n >= 0 && len(elems) != n-1) {
			offs = nil // not what a [[header]] looks like: trust none
			break
		}
		offs = append(offs, pos.Start)
		if n = len(elems); n == 1 {
			break
		}
		loc = newLocator(loc.text[:pos.Start])
		if loc.top == nil {
			offs = nil
			break
		}
	}
	slices.Reverse(offs)
	if l.cuts == nil {
		l.cuts = map[string][]int{}
	}
	l.cuts[key] = offs
	return offs
}

// lookup is the value at k, through tables only.
func (l *locator) lookup(k toml.Key) (toml.Primitive, bool) {
	m := l.top
	for i, part := range k {
		prim, ok := m[part]
		if !ok {
			return toml.Primitive{}, false
		}
		if i == len(k)-1 {
			return prim, true
		}
		m = nil
		if l.md.PrimitiveDecode(prim, &m) != nil {
			return toml.Primitive{}, false
		}
	}
	return toml.Primitive{}, false
}
