package config

import (
	"flag"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/questbox/questbox/internal/reference"
)

var update = flag.Bool("update", false, "rewrite docs/reference/config.md")

// referencePage is the generated reference of the configuration file.
const referencePage = "../../docs/reference/config.md"

// hostDefaults are the defaults that depend on the machine the page is
// generated on, said in words instead.
var hostDefaults = map[string]string{
	"daemon.device_id": "the host name",
}

// TestReferenceConfig generates docs/reference/config.md from the schema
// `run --check-config` knows (every key of the file, with its TOML type),
// the defaults of Default and the doc comments of the fields behind each
// key, and fails when the committed page differs: a key the code has and
// the page lacks, or the other way round. -update rewrites it.
func TestReferenceConfig(t *testing.T) {
	page := configReference(t)
	if err := reference.Lint(page); err != nil {
		t.Error(err)
	}
	reference.Check(t, referencePage, []byte(page), *update)
	// The page names every key the checker accepts: pinned here again
	// so that a hand edit of the page cannot hide one.
	for _, k := range documentedKeys(t) {
		if !strings.Contains(page, "`"+k+"`") {
			t.Errorf("%s does not name the key %s", referencePage, k)
		}
	}
}

// keyDoc is one row of the reference.
type keyDoc struct {
	key, typ, def, meaning string
}

// documentedKeys are the keys the page has a row for: every key of the
// schema but tables, and nothing below a table of free-form keys
// (gates.NAME.rules.params).
func documentedKeys(t *testing.T) []string {
	var out []string
	for _, d := range configKeyDocs(t) {
		out = append(out, d.key)
	}
	return out
}

// configKeyDocs walks the schema's keys, in file order.
func configKeyDocs(t *testing.T) []keyDoc {
	t.Helper()
	s := knownKeys()
	text, err := toml.Marshal(Default())
	if err != nil {
		t.Fatal(err)
	}
	var defaults map[string]any
	if _, err := toml.Decode(string(text), &defaults); err != nil {
		t.Fatal(err)
	}
	sources := map[string]*reference.Source{}
	var out []keyDoc
	for _, k := range s.keys {
		f, parent, ok := fieldOf(k)
		if !ok {
			continue // below a free-form table
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && !isValue(ft) || ft.Kind() == reflect.Map && ft.Elem().Kind() != reflect.Interface ||
			ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct {
			continue // a table: a heading of the page
		}
		src := sources[parent.PkgPath()]
		if src == nil {
			if src, err = reference.Package(parent.PkgPath()); err != nil {
				t.Fatal(err)
			}
			sources[parent.PkgPath()] = src
		}
		doc := src.Field(parent.Name(), f.Name)
		if doc == "" {
			t.Errorf("key %s: the field %s.%s has no doc comment to say what it means", k, parent, f.Name)
		}
		key := k.String()
		def := ""
		if !slices.Contains(k, anyName) {
			def = tomlValue(valueAt(defaults, k))
		}
		if d, ok := hostDefaults[key]; ok {
			def = d
		}
		out = append(out, keyDoc{key: key, typ: typeOf(s, key, ft), def: def, meaning: userText(doc, parent)})
	}
	return out
}

// fieldOf is the struct field behind key k, and the struct type that has
// it; ok is false below a table of free-form keys.
func fieldOf(k toml.Key) (reflect.StructField, reflect.Type, bool) {
	t := reflect.TypeFor[Config]()
	var f reflect.StructField
	for i, part := range k {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Map:
			if t.Elem().Kind() == reflect.Interface {
				return f, nil, false
			}
			t = t.Elem()
			if i == len(k)-1 {
				return f, nil, false // the sample's NAME of a map of values
			}
			continue
		case reflect.Struct:
		default:
			return f, nil, false
		}
		found := false
		for j := range t.NumField() {
			sf := t.Field(j)
			if name, _, _ := strings.Cut(sf.Tag.Get("toml"), ","); name == part {
				f, found = sf, true
				break
			}
		}
		if !found {
			panic(fmt.Sprintf("BUG: the schema's key %s has no field %q in %s", k, part, t))
		}
		if i == len(k)-1 {
			return f, t, true
		}
		t = f.Type
	}
	return f, nil, false
}

// isValue reports whether a struct type is a value of its own in the file
// (a Duration), not a table.
func isValue(t reflect.Type) bool {
	return reflect.PointerTo(t).Implements(reflect.TypeFor[interface{ UnmarshalText([]byte) error }]())
}

// typeOf words the type of a key as a user writes it.
func typeOf(s *schema, key string, t reflect.Type) string {
	switch t {
	case reflect.TypeFor[Duration]():
		return "duration"
	case reflect.TypeFor[Size]():
		return "size"
	case reflect.TypeFor[MemoryLimit]():
		return `size or "off"`
	}
	words := map[string]string{
		typeString: "string", typeInteger: "integer", typeFloat: "number", typeBool: "boolean",
		typeTable: "table", typeArrayTables: "array of tables",
	}
	if s.types[key] == typeArray {
		elem := words[s.elems[key]]
		if elem == "" && t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String {
			elem = "string" // an empty array in the sample has no element to tell
		}
		return "array of " + elem + "s"
	}
	return words[s.types[key]]
}

// tomlValue is a default as TOML writes it; "" for none.
func tomlValue(v any) string {
	if v == nil {
		return ""
	}
	text, err := toml.Marshal(map[string]any{"v": v})
	if err != nil {
		panic("BUG: " + err.Error())
	}
	return strings.TrimSpace(strings.TrimPrefix(string(text), "v = "))
}

// userText is a field's doc comment for a user: one paragraph, with the
// Go names of the struct's fields replaced by their keys.
func userText(doc string, parent reflect.Type) string {
	text := reference.Text(doc)
	for i := range parent.NumField() {
		f := parent.Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if key == "" || key == "-" {
			continue
		}
		re := regexp.MustCompile(`\b` + f.Name + `\b`)
		text = re.ReplaceAllString(text, "`"+key+"`")
	}
	return text
}

// configReference is the page.
func configReference(t *testing.T) string {
	var b strings.Builder
	b.WriteString(reference.Header("Configuration file reference",
		"Every key of questbox's configuration file (TOML; `/etc/questbox/questbox.toml` unless `--config` or\n"+
			"`QUESTBOX_CONFIG` names another), with its type, its default and what it does. A key left out takes\n"+
			"its default. `questbox run --check-config` checks a file against exactly these keys; an unknown key,\n"+
			"or a value of the wrong type, stops the daemon with the file, the line and the key.\n\n"+
			"`NAME` stands for a name you choose: `[providers.claude]`, `[gates.strict]`, `[roles.scout]`.\n"+
			"A duration is a number with a unit (`500ms`, `30s`, `5m`, `24h`); a size is a number of bytes with\n"+
			"an optional unit (`4KiB`, `1MiB`)."))
	section := ""
	var rows [][]string
	flush := func() {
		if section != "" {
			b.WriteString("\n## `" + section + "`\n\n")
			if intro := tableIntro(t, section); intro != "" {
				b.WriteString(intro + "\n\n")
			}
			reference.Table(&b, []string{"key", "type", "default", "meaning"}, rows)
		}
		rows = nil
	}
	for _, d := range configKeyDocs(t) {
		if s := tableOf(d.key); s != section {
			flush()
			section = s
		}
		rows = append(rows, []string{reference.Code(d.key), d.typ, reference.Code(d.def), reference.Cell(d.meaning)})
	}
	flush()
	return b.String()
}

// tableIntro is what a table of the file is for: the doc comment of its
// Go type, which starts with the type's name, said as the table's.
func tableIntro(t *testing.T, section string) string {
	k, ok := parseKey(strings.Trim(section, "[]"))
	if !ok {
		t.Fatalf("BUG: section %q", section)
	}
	typ := reflect.TypeFor[Config]()
	for _, st := range k {
		for typ.Kind() != reflect.Struct {
			typ = typ.Elem() // through maps, pointers and arrays of tables
		}
		f, ok := typ.FieldByNameFunc(func(n string) bool {
			sf, _ := typ.FieldByName(n)
			name, _, _ := strings.Cut(sf.Tag.Get("toml"), ",")
			return name == st.name
		})
		if !ok && st.name == anyName {
			continue
		}
		if !ok {
			t.Fatalf("BUG: no field for %s in %s", st.name, typ)
		}
		typ = f.Type
	}
	for typ.Kind() != reflect.Struct {
		typ = typ.Elem()
	}
	src, err := reference.Package(typ.PkgPath())
	if err != nil {
		t.Fatal(err)
	}
	text := userText(src.Type(typ.Name()), typ)
	if rest, ok := strings.CutPrefix(text, typ.Name()+" "); ok {
		text = "`" + section + "` " + rest
	}
	return reference.Cell(text)
}

// tableOf is the TOML table header a key is written under: [daemon],
// [providers.NAME], [[gates.NAME.rules]].
func tableOf(key string) string {
	k, _ := parseKey(key)
	parent := k[:len(k)-1].key()
	if len(parent) == 0 {
		return "top level"
	}
	if knownKeys().types[parent.String()] == typeArrayTables {
		return "[[" + parent.String() + "]]"
	}
	return "[" + parent.String() + "]"
}
