package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// Load reads the file at path and returns [Default] with the file laid over it,
// validated. A missing or unreadable file is an error too (it wraps both
// [ErrInvalid] and the fs error, so errors.Is(err, fs.ErrNotExist) tells a
// missing file apart); the caller decides whether running on defaults is right.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return Parse(data, path)
}

// Parse is [Load] for data already read; name is used in errors and stored in
// Config.Path. Keys absent from data keep their defaults; a configured
// provider's timeout, output_cap and (command) env get theirs when absent.
//
// Parse reports, all at once: TOML syntax errors (file:line:col), unknown keys
// (with the full dotted key and a suggestion), values of the wrong type or
// format; then, if there were none, every problem [Config.Validate] finds.
func Parse(data []byte, name string) (*Config, error) {
	// First pass: the generic TOML tree, to check every key and value against
	// the schema and report every problem, not just the first one the typed
	// decoder would stop at.
	var raw map[string]any
	md, err := toml.Decode(string(data), &raw)
	if err != nil {
		return nil, syntaxError(name, data, err)
	}
	if errs := checkTree(name, md, raw); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}

	// Second pass: the typed decode over the defaults.
	cfg := Default()
	cfg.Path = name
	md, err = toml.Decode(string(data), cfg)
	if err != nil {
		// checkTree should have caught anything the decoder refuses.
		return nil, syntaxError(name, data, err)
	}
	// Undecoded is the decoder's own word on unknown keys; checkTree has
	// reported them already, so this only fires if the two ever disagree.
	var errs []error
	for _, k := range md.Undecoded() {
		errs = append(errs, unknownKey(name, k))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}

	for pname, p := range cfg.Providers {
		def := defaultProvider()
		if !md.IsDefined("providers", pname, "timeout") {
			p.Timeout = def.Timeout
		}
		if !md.IsDefined("providers", pname, "output_cap") {
			p.OutputCap = def.OutputCap
		}
		if p.Type == TypeCommand && !md.IsDefined("providers", pname, "env") {
			p.Env = defaultEnv()
		}
		cfg.Providers[pname] = p
	}

	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// syntaxError turns a TOML parse error into an [*Error] with its position.
func syntaxError(file string, data []byte, err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		msg := pe.Message
		if pe.LastKey != "" {
			msg = pe.LastKey + ": " + msg
		}
		line, col := position(data, pe.Position.Start)
		return &Error{File: file, Line: line, Col: col, Key: pe.LastKey, Msg: msg}
	}
	return &Error{File: file, Msg: err.Error()}
}

// position converts a byte offset into a 1-based line and column (in runes).
// The toml package's own Line/Col can be one line late when the offending
// byte is a newline, so they are recomputed from the offset.
func position(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	before := data[:off]
	line = 1 + bytes.Count(before, []byte("\n"))
	col = 1 + utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:])
	return line, col
}

var (
	configType   = reflect.TypeFor[Config]()
	durationType = reflect.TypeFor[Duration]()
	sizeType     = reflect.TypeFor[Size]()
)

// checkTree checks every key of the file, in file order, against the schema
// (the toml tags of Config): unknown keys and values of the wrong type. Below
// a key already reported nothing more is reported. An array of tables that
// decodes into a slice of structs (gates.NAME.rules) is checked as a whole,
// element by element, so that each problem names its index.
func checkTree(file string, md toml.MetaData, raw map[string]any) []error {
	var errs []error
	var done []toml.Key
	for _, k := range md.Keys() {
		if underAny(k, done) {
			continue
		}
		t, n := resolve(k)
		if t == nil {
			uk := k[:n+1]
			errs = append(errs, unknownKey(file, uk))
			done = append(done, uk)
			continue
		}
		v, ok := lookup(raw, k)
		if !ok {
			continue
		}
		if isTables(t) {
			errs = append(errs, checkTables(file, k.String(), v, t.Elem())...)
			done = append(done, k)
			continue
		}
		if msg := checkValue(v, t); msg != "" {
			key := k.String()
			errs = append(errs, &Error{File: file, Key: key, Msg: key + ": " + msg})
			done = append(done, k)
		}
	}
	return errs
}

// isTables reports whether t is a slice of structs: an array of tables.
func isTables(t reflect.Type) bool {
	return t.Kind() == reflect.Slice && deref(t.Elem()).Kind() == reflect.Struct
}

// deref is t without its pointers.
func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// checkTables checks an array of tables v at key against the struct elem:
// every element a table, every key of it known, every value of its type.
// Problems name the element: key[i].field.
func checkTables(file, key string, v any, elem reflect.Type) []error {
	elem = deref(elem)
	var tables []any
	switch a := v.(type) {
	case []map[string]any:
		for _, m := range a {
			tables = append(tables, m)
		}
	case []any:
		tables = a
	default:
		return []error{&Error{File: file, Key: key, Msg: key + ": " + want(v, "an array of tables")}}
	}
	var errs []error
	for i, e := range tables {
		at := fmt.Sprintf("%s[%d]", key, i)
		m, ok := e.(map[string]any)
		if !ok {
			errs = append(errs, &Error{File: file, Key: at, Msg: at + ": " + want(e, "a table")})
			continue
		}
		names := make([]string, 0, len(m))
		for name := range m {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			fk := at + "." + toml.Key{name}.String()
			f, ok := fieldByTag(elem, name)
			if !ok {
				msg := "unknown key " + fk
				if s := closestField(elem, name); s != "" {
					msg += " (did you mean " + at + "." + s + "?)"
				}
				errs = append(errs, &Error{File: file, Key: fk, Msg: msg})
				continue
			}
			if msg := checkValue(m[name], f.Type); msg != "" {
				errs = append(errs, &Error{File: file, Key: fk, Msg: fk + ": " + msg})
			}
		}
	}
	return errs
}

// closestField is the field of struct t nearest to name, or "".
func closestField(t reflect.Type, name string) string {
	best, bestD := "", maxDistance(name)+1
	for i := range t.NumField() {
		if tag := tagName(t.Field(i)); tag != "" {
			if d := distance(name, tag); d < bestD {
				best, bestD = tag, d
			}
		}
	}
	return best
}

// underAny reports whether k is one of keys or below one.
func underAny(k toml.Key, keys []toml.Key) bool {
	for _, p := range keys {
		if len(p) <= len(k) && slices.Equal(k[:len(p)], p) {
			return true
		}
	}
	return false
}

// isLeaf reports whether t takes a single TOML value rather than a table.
// An interface (a rule's free-form params) takes anything, tables included,
// and its contents are checked by whoever reads them.
func isLeaf(t reflect.Type) bool {
	t = deref(t)
	if t == durationType || t == sizeType {
		return true
	}
	k := t.Kind()
	return k != reflect.Struct && k != reflect.Map
}

// resolve finds the Go type the key decodes into. If the key is not in the
// schema it returns nil and the index of the first unknown part.
func resolve(k toml.Key) (reflect.Type, int) {
	t := configType
	for i, part := range k {
		t = deref(t)
		switch {
		case t.Kind() == reflect.Interface:
			return t, 0
		case isLeaf(t):
			return nil, i
		case t.Kind() == reflect.Map:
			t = t.Elem()
		default:
			f, ok := fieldByTag(t, part)
			if !ok {
				return nil, i
			}
			t = f.Type
		}
	}
	return deref(t), 0
}

// fieldByTag finds the struct field whose toml tag is name.
func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if tag := tagName(f); tag != "" && tag == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func tagName(f reflect.StructField) string {
	tag, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	if tag == "-" || !f.IsExported() {
		return ""
	}
	return tag
}

// lookup returns the value at k in the generic tree.
func lookup(raw map[string]any, k toml.Key) (any, bool) {
	var v any = raw
	for _, part := range k {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[part]; !ok {
			return nil, false
		}
	}
	return v, true
}

// checkValue says what is wrong with TOML value v for Go type t, or "".
func checkValue(v any, t reflect.Type) string {
	t = deref(t)
	switch t {
	case durationType:
		switch v := v.(type) {
		case string:
			var d Duration
			if err := d.UnmarshalText([]byte(v)); err != nil {
				return err.Error()
			}
			return ""
		case int64:
			return fmt.Sprintf("%d is not a duration %s; write it as a string, e.g. \"%ds\"", v, durationHint, v)
		}
		return fmt.Sprintf("%s is not a duration %s", describe(v), durationHint)
	case sizeType:
		switch v := v.(type) {
		case string:
			var s Size
			if err := s.UnmarshalText([]byte(v)); err != nil {
				return err.Error()
			}
			return ""
		case int64:
			if v < 0 {
				return fmt.Sprintf("%d is negative", v)
			}
			return ""
		}
		return fmt.Sprintf("%s is not a size %s", describe(v), sizeHint)
	}
	switch t.Kind() {
	case reflect.String:
		if _, ok := v.(string); ok {
			return ""
		}
		return want(v, "a string")
	case reflect.Bool:
		if _, ok := v.(bool); ok {
			return ""
		}
		return want(v, "a boolean (true or false)")
	case reflect.Float64:
		switch v.(type) {
		case float64, int64:
			return ""
		}
		return want(v, "a number")
	case reflect.Interface:
		return ""
	case reflect.Int, reflect.Int64:
		i, ok := v.(int64)
		if !ok {
			return want(v, "an integer")
		}
		if t.Bits() < 64 && (i > 1<<(t.Bits()-1)-1 || i < -1<<(t.Bits()-1)) {
			return fmt.Sprintf("%d is out of range", i)
		}
		return ""
	case reflect.Slice:
		if isTables(t) {
			if _, ok := v.([]map[string]any); ok {
				return ""
			}
		}
		a, ok := v.([]any)
		if !ok {
			return want(v, "an array")
		}
		for i, e := range a {
			if msg := checkValue(e, t.Elem()); msg != "" {
				return fmt.Sprintf("element %d: %s", i, msg)
			}
		}
		return ""
	case reflect.Struct, reflect.Map:
		if _, ok := v.(map[string]any); ok {
			return ""
		}
		return want(v, "a table")
	}
	panic("BUG: config: no TOML check for field type " + t.String())
}

// want formats a type mismatch: `"two" is a string, want an integer`.
func want(v any, what string) string {
	return describe(v) + ", want " + what
}

// describe names a TOML value and its type: `"two" is a string`, `a table`.
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

// unknownKey reports k, suggesting the closest key the schema has.
func unknownKey(file string, k toml.Key) error {
	key := k.String()
	msg := "unknown key " + key
	if s := suggest(k); s != "" {
		msg += " (did you mean " + s + "?)"
	}
	return &Error{File: file, Key: key, Msg: msg}
}

// suggest returns the known key closest to the unknown key k: a key of the
// same name in another table (`tick` at the top level suggests daemon.tick,
// defaults.max_parallel suggests daemon.max_parallel), else the sibling
// within the smallest small edit distance, else the nearest key anywhere.
// "" if nothing is close.
func suggest(k toml.Key) string {
	parent, leaf := k[:len(k)-1], k[len(k)-1]
	sibling, siblingD := "", maxDistance(leaf)+1
	if pt, _ := resolve(parent); pt != nil && pt.Kind() == reflect.Struct && !isLeaf(pt) {
		for i := range pt.NumField() {
			if name := tagName(pt.Field(i)); name != "" {
				if d := distance(leaf, name); d < siblingD {
					sibling, siblingD = name, d
				}
			}
		}
	}
	elsewhere, elsewhereD := "", maxDistance(leaf)+1
	walkSchema(configType, nil, func(path toml.Key) {
		if d := distance(leaf, path[len(path)-1]); d < elsewhereD {
			elsewhere, elsewhereD = path.String(), d
		}
	})
	switch {
	case elsewhereD == 0:
		return elsewhere
	case sibling != "":
		return append(parent[:len(parent):len(parent)], sibling).String()
	}
	return elsewhere
}

// walkSchema calls fn with the path of every key in the schema, tables first.
// Map entries (providers) appear as providers.NAME; the fields of an array
// of tables appear below the array's key (gates.NAME.rules.id).
func walkSchema(t reflect.Type, prefix toml.Key, fn func(toml.Key)) {
	t = deref(t)
	switch {
	case isTables(t):
		walkSchema(t.Elem(), prefix, fn)
	case t.Kind() == reflect.Map && t.Elem().Kind() == reflect.Interface:
		// free-form (a rule's params): no keys of its own
	case isLeaf(t):
	case t.Kind() == reflect.Map:
		walkSchema(t.Elem(), append(prefix[:len(prefix):len(prefix)], "NAME"), fn)
	default:
		for i := range t.NumField() {
			name := tagName(t.Field(i))
			if name == "" {
				continue
			}
			p := append(prefix[:len(prefix):len(prefix)], name)
			fn(p)
			walkSchema(t.Field(i).Type, p, fn)
		}
	}
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
