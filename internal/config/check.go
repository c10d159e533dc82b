package config

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// file is a configuration file being parsed.
type file struct {
	name string
	data []byte
	tree map[string]any // what the file says, before any type: the generic decode
	md   toml.MetaData  // of the decode into a Config
	loc  *locator       // made for the first error
}

// A problem is an unknown key or a value the decoder refused, before it
// has a position.
type problem struct {
	at      path
	unknown bool   // at is not a key of the configuration
	suggest string // for an unknown key, the key it means; "" to work it out
	msg     string // for a value, what is wrong with it
}

// check finds the unknown keys and the values of the wrong type, and
// returns them as errors in file order, with where they are. Unknown keys are the decoder's
// own word (toml.MetaData.Undecoded). The decoder stops at the first value
// it cannot decode, and which one it meets first depends on map order; so
// when it failed, every key is decoded again on its own (decodeEach), to
// report each problem, always the same way.
func (f *file) check(decodeErr error) ([]error, []problem) {
	var found []problem
	if decodeErr != nil {
		found = f.decodeEach()
		if len(found) == 0 {
			// Never accept what the decoder refused, even unexplained.
			return []error{syntaxError(f.name, f.data, decodeErr)}, nil
		}
	} else {
		sk := knownKeys()
		seen := map[string]bool{}
		for _, k := range f.md.Undecoded() {
			// Each element of an array of tables lists its keys again.
			if seen[k.String()] {
				continue
			}
			seen[k.String()] = true
			for _, p := range f.expand(k) {
				// deamon.tick = 1 is an unknown deamon, as [deamon] is.
				for i := 1; i < len(p); i++ {
					if _, ok := sk.lookup(p[:i]); !ok {
						p = slices.Clone(p[:i])
						p[i-1].elem = -1
						break
					}
				}
				found = append(found, problem{at: p, unknown: true})
			}
		}
	}
	found = append(found, f.notTables()...)
	found = append(found, f.caseMismatches()...)
	found = append(found, f.outOfRange(strconv.IntSize)...)
	return f.report(found), found
}

// walk calls fn for every key of the file, a table before its keys, keys
// in name order, and each element of an array of tables as a key of its
// own (rules[0]); fn returns whether to go below the key.
func (f *file) walk(fn func(at path, v any) bool) { walkTable(f.tree, nil, fn) }

func walkTable(m map[string]any, at path, fn func(path, any) bool) {
	for _, name := range slices.Sorted(maps.Keys(m)) {
		v := m[name]
		if ts, ok := tables(v); ok {
			for i, t := range ts {
				if p := at.with(name, i); fn(p, t) {
					walkTable(t, p, fn)
				}
			}
			continue
		}
		p := at.with(name, -1)
		if fn(p, v) {
			if t, ok := v.(map[string]any); ok {
				walkTable(t, p, fn)
			}
		}
	}
}

// value is the value at p in the file, and whether the file has it.
func (f *file) value(p path) (any, bool) {
	var v any = f.tree
	for _, s := range p {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[s.name]; !ok {
			return nil, false
		}
		if s.elem >= 0 {
			ts, ok := tables(v)
			if !ok || s.elem >= len(ts) {
				return nil, false
			}
			v = ts[s.elem]
		}
	}
	return v, true
}

// expand lists where the file has key k: one path, or one per element of
// an array of tables on the way that has the rest of k.
func (f *file) expand(k toml.Key) []path {
	var out []path
	var walk func(v any, at path, rest toml.Key)
	walk = func(v any, at path, rest toml.Key) {
		if len(rest) == 0 {
			out = append(out, at)
			return
		}
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		child, ok := m[rest[0]]
		if !ok {
			return
		}
		if ts, ok := tables(child); ok && len(rest) > 1 {
			for i, t := range ts {
				walk(t, at.with(rest[0], i), rest[1:])
			}
			return
		}
		walk(child, at.with(rest[0], -1), rest[1:])
	}
	walk(f.tree, nil, k)
	return out
}

// isSet reports whether the file writes key (as an [*Error] names it):
// md.IsDefined, or for a key inside an element of an array of tables,
// which IsDefined cannot reach, whether that element has it.
func (f *file) isSet(key string) bool {
	p, ok := parseKey(key)
	if !ok {
		return false
	}
	if !p.indexed() {
		return f.md.IsDefined(p.key()...)
	}
	_, ok = f.value(p)
	return ok
}

// decodeEach decodes every key of the file on its own over the defaults: a
// table as an empty one, an element of an array of tables as an empty table
// in an array of one, any other value as itself. A key that decoding leaves
// undecoded is unknown; a value it refuses is of the wrong type. Nothing
// below a problem is looked at.
func (f *file) decodeEach() []problem {
	var found []problem
	f.walk(func(at path, v any) bool {
		alone := v
		if _, ok := v.(map[string]any); ok {
			alone = map[string]any{}
		}
		text, err := toml.Marshal(nest(at, alone))
		if err != nil {
			return true // cannot be isolated; what is below it can
		}
		md, err := toml.Decode(string(text), Default())
		switch last := at[len(at)-1]; {
		case err != nil && last.elem >= 0:
			// Even an empty element is refused: the key does not take an
			// array of tables.
			arr := at[:len(at)-1].with(last.name, -1)
			whole, _ := f.value(arr)
			found = append(found, wrongType(arr, whole, err))
		case err != nil:
			found = append(found, wrongType(at, v, err))
		case len(md.Undecoded()) > 0:
			k := slices.MinFunc(md.Undecoded(), func(a, b toml.Key) int { return cmp.Compare(len(a), len(b)) })
			unknown := slices.Clone(at[:len(k)])
			unknown[len(k)-1].elem = -1
			found = append(found, problem{at: unknown, unknown: true})
		default:
			return true
		}
		return false
	})
	return found
}

// nest is the file with nothing but v at path at.
func nest(at path, v any) map[string]any {
	for i := len(at) - 1; i >= 0; i-- {
		if at[i].elem >= 0 {
			v = []map[string]any{v.(map[string]any)}
		}
		v = map[string]any{at[i].name: v}
	}
	return v.(map[string]any)
}

// wrongType says what is wrong with value v at at, which the decoder
// refused with err. A type's own refusal (a duration or a size that does
// not parse) comes as a toml.ParseError and speaks for itself; otherwise
// the schema says what the key takes.
func wrongType(at path, v any, err error) problem {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return problem{at: at, msg: pe.Message}
	}
	sk := knownKeys()
	key, ok := sk.lookup(at)
	if !ok {
		return problem{at: at, msg: strings.TrimPrefix(err.Error(), "toml: ")}
	}
	t := sk.types[key]
	if a, ok := v.([]any); ok {
		for i, e := range a {
			switch {
			case t == typeArrayTables && tomlType(e) != typeTable:
				return problem{at: at[:len(at)-1].with(at[len(at)-1].name, i), msg: want(e, wants[typeTable])}
			case t == typeArray && sk.elems[key] != "" && tomlType(e) != sk.elems[key]:
				return problem{at: at, msg: fmt.Sprintf("element %d: %s", i, want(e, wants[sk.elems[key]]))}
			}
		}
	}
	return problem{at: at, msg: want(v, wants[t])}
}

// notTables finds the values that should be tables and are not. The
// decoder refuses them for a struct (daemon = 1), but for a map (providers,
// gates, a rule's params) it quietly drops them.
func (f *file) notTables() []problem {
	sk := knownKeys()
	var found []problem
	f.walk(func(at path, v any) bool {
		key, ok := sk.lookup(at)
		if !ok {
			return false
		}
		if sk.types[key] != typeTable {
			return true
		}
		if last := at[len(at)-1]; last.elem >= 0 {
			arr := at[:len(at)-1].with(last.name, -1)
			whole, _ := f.value(arr)
			found = append(found, problem{at: arr, msg: want(whole, wants[typeTable])})
			return false
		}
		if _, ok := v.(map[string]any); !ok {
			found = append(found, problem{at: at, msg: want(v, wants[typeTable])})
			return false
		}
		return true
	})
	return found
}

// caseMismatches finds the keys that differ from a known key only in case:
// the decoder matches them case-insensitively, so it would take Tick for
// tick without a word (and of a Tick and a tick keep either).
func (f *file) caseMismatches() []problem {
	sk := knownKeys()
	var found []problem
	f.walk(func(at path, _ any) bool {
		if _, ok := sk.lookup(at); ok {
			return true
		}
		if fixed, ok := sk.fold(at); ok {
			found = append(found, problem{at: at, unknown: true, suggest: fixed.String()})
		}
		return false // below a key the schema does not have, nothing is known
	})
	return found
}

// outOfRange finds integers too large for the Go int of bits bits they
// decode into: the decoder does not check an int's range, and on the Pi
// Zero and Pi 1 (armv6) an int has 32 bits.
func (f *file) outOfRange(bits int) []problem {
	if bits >= 64 {
		return nil
	}
	lo, hi := -int64(1)<<(bits-1), int64(1)<<(bits-1)-1
	sk := knownKeys()
	var found []problem
	f.walk(func(at path, v any) bool {
		key, ok := sk.lookup(at)
		if !ok {
			return false
		}
		if i, isInt := v.(int64); isInt && sk.types[key] == typeInteger && (i < lo || i > hi) {
			found = append(found, problem{at: at, msg: fmt.Sprintf("%d is out of range (%d..%d)", i, lo, hi)})
		}
		return true
	})
	return found
}

// locator returns the file's locator, made on first use.
func (f *file) locator() *locator {
	if f.loc == nil {
		f.loc = newLocator(string(f.data))
	}
	return f.loc
}

// locate puts on e the line of p, and the column toml recorded for it
// (the value of a key = value line, the key in an inline table) when p is
// written and is not a table (a column on a [header] says nothing).
// lineOnly leaves the column out anyway, for errors about the key itself.
// It returns the offset in the file, or -1 when p has no position.
func (f *file) locate(e *Error, p path, lineOnly bool) int {
	pos, own := f.locator().find(p)
	if pos.Line == 0 {
		return -1
	}
	e.Line, e.Col = position(f.data, pos.Start)
	v, _ := f.value(p)
	_, table := v.(map[string]any)
	_, array := tables(v)
	if lineOnly || !own || table || array {
		e.Col = 0
	}
	return pos.Start
}

// report turns problems into errors in file order: one per key, an
// unknown key rather than a value of the wrong type, and nothing below a
// key that has one.
func (f *file) report(found []problem) []error {
	type placed struct {
		err *Error
		off int // where in the file; -1 when unknown
	}
	var out []placed
	seen := map[string]bool{}
	for _, pr := range found {
		shadowed := slices.ContainsFunc(found, func(o problem) bool {
			return pr.at.within(o.at) && (len(o.at) < len(pr.at) || o.unknown && !pr.unknown)
		})
		key := pr.at.String()
		if shadowed || seen[key] {
			continue
		}
		seen[key] = true
		e := &Error{File: f.name, Key: key, Msg: key + ": " + pr.msg}
		if pr.unknown {
			e.Msg = "unknown key " + key
			s := pr.suggest
			if s == "" {
				s = knownKeys().suggest(pr.at)
			}
			if s != "" {
				e.Msg += " (did you mean " + s + "?)"
			}
		}
		out = append(out, placed{e, f.locate(e, pr.at, pr.unknown)})
	}
	slices.SortStableFunc(out, func(a, b placed) int {
		if (a.off < 0) != (b.off < 0) {
			return cmp.Compare(b.off, a.off) // the ones without a place last
		}
		return cmp.Compare(a.off, b.off)
	})
	errs := make([]error, len(out))
	for i, p := range out {
		errs[i] = p.err
	}
	return errs
}

// place gives each validation error the line of its key, or of the table
// it belongs in when the file leaves the key out.
func (f *file) place(errs []error) []error {
	for _, err := range errs {
		var e *Error
		if !errors.As(err, &e) || e.Line > 0 || e.Key == "" {
			continue
		}
		if p, ok := parseKey(e.Key); ok {
			f.locate(e, p, false)
		}
	}
	return errs
}

// want formats a type mismatch: `"two" is a string, want an integer`.
func want(v any, what string) string {
	return describe(v) + ", want " + what
}

// describe names a TOML value and its type: `"two" is a string`, `got a table`.
func describe(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v) + " is a string"
	case int64:
		return strconv.FormatInt(v, 10) + " is an integer"
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64) + " is a float"
	case bool:
		return strconv.FormatBool(v) + " is a boolean"
	case time.Time:
		return fmt.Sprint(v) + " is a date/time"
	case []any:
		return "got an array"
	case []map[string]any:
		return "got an array of tables"
	case map[string]any:
		return "got a table"
	}
	return fmt.Sprintf("got %T", v)
}

// literal is a TOML value as a message quotes it: "5 minutes", 30, a table.
func literal(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case int64, float64, bool:
		return fmt.Sprint(v)
	case time.Time:
		return "the date/time " + fmt.Sprint(v)
	case []any:
		return "an array"
	case []map[string]any:
		return "an array of tables"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprintf("a %T", v)
}
