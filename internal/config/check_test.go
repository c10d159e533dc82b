package config

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// errorsOf is every error of a failed Parse, as printed.
func errorsOf(t *testing.T, file string) []string {
	t.Helper()
	c, err := Parse([]byte(file), "q.toml")
	if err == nil {
		t.Fatalf("Parse succeeded (%+v), want errors", c)
	}
	var got []string
	for _, e := range problemsOf(t, err) {
		got = append(got, e.Error())
	}
	return got
}

// TestErrorPositions pins where each kind of problem points: the line of
// a key (and the column of its value when the value is what is wrong),
// the line of the table a missing key belongs in, and inside arrays of
// tables the element's own line, although the toml package records only
// the last element's.
func TestErrorPositions(t *testing.T) {
	const rules = "[[gates.g.rules]]\nid = \"a\"\nkind = \"contract\"\nlevel = %s\n\n[[gates.g.rules]]\nid = \"b\"\nkind = %s\nlevel = \"fail\"\n\n[[gates.g.rules]]\nid = \"c\"\nkind = \"contract\"\nlevel = \"fail\"\n"
	for _, tc := range []struct {
		name string
		file string
		want []string
	}{
		{"unknown key: its line", "[daemon]\n\ntik = \"5s\"\n",
			[]string{"q.toml:3: unknown key daemon.tik (did you mean daemon.tick?)"}},
		{"unknown table: its header", "# x\n[deamon]\ntick = \"5s\"\n",
			[]string{"q.toml:2: unknown key deamon (did you mean daemon?)"}},
		{"unknown table of a dotted key: the key's line", "\n\ndeamon.tick = \"5s\"\n",
			[]string{"q.toml:3: unknown key deamon (did you mean daemon?)"}},
		{"wrong type: the value", "[daemon]\nmax_parallel =   \"two\"\n",
			[]string{`q.toml:2:19: daemon.max_parallel: "two" is a string, want an integer`}},
		{"wrong type after multibyte text: columns in runes", "daemon = { data = \"ééé\", grace = 1 }\n",
			[]string{`q.toml:1:26: daemon.grace: 1 is not a duration (use 90s, 5m, 24h); write it as a string, e.g. "1s"`}},
		{"bad duration: the value", "[gpio]\ndebounce = 50\n",
			[]string{`q.toml:2:12: gpio.debounce: 50 is not a duration (use 90s, 5m, 24h); write it as a string, e.g. "50s"`}},
		{"several, in file order", "[gpio]\nred = \"x\"\n[daemon]\ngrace = 1\nmax_parallel = 0.5\n",
			[]string{`q.toml:2:8: gpio.red: "x" is a string, want an integer`,
				`q.toml:4:9: daemon.grace: 1 is not a duration (use 90s, 5m, 24h); write it as a string, e.g. "1s"`,
				`q.toml:5:16: daemon.max_parallel: 0.5 is a float, want an integer`}},
		{"first of three elements, a key all have", strings.Replace(strings.Replace(rules, "%s", "2", 1), "%s", `"contract"`, 1),
			[]string{`q.toml:4:9: gates.g.rules[0].level: 2 is an integer, want a string`}},
		{"middle element, validation: its header", strings.Replace(strings.Replace(rules, "%s", `"fail"`, 1), "%s", `"quote"`, 1),
			[]string{`q.toml:6: gates.g.rules[1]: rule "b": kind "quote" (known: contract, evidence-length, fresh-directions, citations-present, citation-quote, url-resolves, mx-resolves, program, dates, regex, limits): unknown rule kind`}},
		{"unknown key in an element", "[[gates.g.rules]]\nid = \"a\"\nkind = \"contract\"\nlevl = \"fail\"\n[[gates.g.rules]]\nid = \"b\"\nkind = \"contract\"\nlevl = \"fail\"\n",
			[]string{"q.toml:4: unknown key gates.g.rules[0].levl (did you mean gates.g.rules[0].level?)",
				"q.toml:8: unknown key gates.g.rules[1].levl (did you mean gates.g.rules[1].level?)"}},
		{"inline array element: where the array starts", "\ngates.g.rules = [\n  { id = \"a\", kind = \"contract\", level = \"fail\" },\n  { id = \"b\", kind = \"quote\", level = \"fail\" },\n]\n",
			[]string{`q.toml:2: gates.g.rules[1]: rule "b": kind "quote" (known: contract, evidence-length, fresh-directions, citations-present, citation-quote, url-resolves, mx-resolves, program, dates, regex, limits): unknown rule kind`}},
		{"inline array element, a key only it has", "gates.g.rules = [\n  { id = \"a\", kind = \"contract\", level = \"fail\" },\n  { id = \"b\", kind = \"contract\", level = \"fail\", weight = \"x\" },\n]\n",
			[]string{`q.toml:3:50: gates.g.rules[1].weight: "x" is a string, want a number`}},
		{"validation: the value", "[daemon]\n\nmax_parallel = 0\n",
			[]string{"q.toml:3:16: daemon.max_parallel: 0 is below the minimum 1"}},
		{"missing key: its table's header", providersTOML + "\n[judge]\nlight = { provider = \"llm\", model = \"m\" }\nheavy = { provider = \"cli\", model = \"m\" }\ntemplate = \"v1\"\ncanaries = 2\n",
			[]string{"q.toml:10: judge.canary_threshold: missing; how many canaries a judge may miss before its batch escalates (0 up to judge.canaries - 1), e.g. canary_threshold = 0"}},
		{"missing key of a table only dotted keys make: their first line", "\njudge.light = { provider = \"llm\", model = \"m\" }\njudge.heavy = { provider = \"cli\", model = \"m\" }\njudge.canaries = 2\njudge.canary_threshold = 0\n" + providersTOML,
			[]string{`q.toml:2: judge.template: missing; use "v1"`}},
		{"unknown array of tables: its first element, once", "# x\n" + strings.Repeat("[[x]]\ny = 1\n", 200),
			[]string{"q.toml:2: unknown key x"}},
		{"missing provider key: the provider's header", "[providers.x]\ntype = \"openai\"\nbase_url = \"http://h/v1\"\n",
			[]string{"q.toml:1: providers.x.model: missing; an openai provider needs the model name"}},
		{"quoted names", "[providers.\"My LLM\"]\ntype = \"command\"\nargv = [\"a\"]\n",
			[]string{`q.toml:1: providers."My LLM": provider name "My LLM" must match [a-z0-9_-]+`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := errorsOf(t, tc.file); !slices.Equal(got, tc.want) {
				t.Errorf("errors:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestDecodeErrorsAreStable pins that a file with many values of the wrong
// type gets all of them, in file order, every time: the toml decoder alone
// stops at one, which one depending on map order.
func TestDecodeErrorsAreStable(t *testing.T) {
	const text = `
[gpio]
green = "a"
amber = "b"
red = "c"
button = "d"
backend = 1
[daemon]
tick = 5
max_parallel = "e"
bogus = 1
[[gates.g.rules]]
id = 1
kind = 2
level = 3
`
	first := errorsOf(t, text)
	if len(first) != 11 {
		t.Fatalf("got %d errors, want 11:\n%s", len(first), strings.Join(first, "\n"))
	}
	for i := range 20 {
		if got := errorsOf(t, text); !slices.Equal(got, first) {
			t.Fatalf("parse %d:\n got %q\nwant %q", i, got, first)
		}
	}
	lines := ""
	for _, e := range first {
		lines += strings.SplitN(e, ":", 3)[1] + " "
	}
	if want := "3 4 5 6 7 9 10 11 13 14 15 "; lines != want {
		t.Errorf("lines: got %s, want %s", lines, want)
	}
}

// TestKeysInAnotherCase pins that a key is its exact spelling: the toml
// decoder would match Tick to tick, and of both keep either.
func TestKeysInAnotherCase(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       []string
	}{
		{"table", "[Daemon]\ntick = \"5s\"\n", []string{"q.toml:1: unknown key Daemon (did you mean daemon?)"}},
		{"key", "[gpio]\nGreen = 5\n", []string{"q.toml:2: unknown key gpio.Green (did you mean gpio.green?)"}},
		{"both spellings", "[daemon]\ntick = \"5s\"\nTICK = \"6s\"\n", []string{"q.toml:3: unknown key daemon.TICK (did you mean daemon.tick?)"}},
		{"of the wrong type too", "[daemon]\nTick = 5\n", []string{"q.toml:2: unknown key daemon.Tick (did you mean daemon.tick?)"}},
		{"in a provider", "[providers.x]\nType = \"command\"\nargv = [\"x\"]\n", []string{"q.toml:2: unknown key providers.x.Type (did you mean providers.x.type?)"}},
		{"in a rule", "[[gates.g.rules]]\nID = \"a\"\nkind = \"contract\"\nlevel = \"fail\"\n", []string{"q.toml:2: unknown key gates.g.rules[0].ID (did you mean gates.g.rules[0].id?)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := errorsOf(t, tc.file); !slices.Equal(got, tc.want) {
				t.Errorf("errors:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
	// Names are the owner's: only their own rules apply.
	if _, err := Parse([]byte("[gates.Strict]\nrules = [{ id = \"A\", kind = \"regex\", level = \"fail\", params = { Field = \"evidence\" } }]\n"), "q.toml"); err == nil ||
		strings.Contains(err.Error(), "unknown key") {
		t.Errorf("got %v, want only the profile name refused", err)
	}
}

// TestNotATable pins what the toml decoder lets through: a value that is
// not a table where a map is decoded is dropped without a word.
func TestNotATable(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       []string
	}{
		{"providers", "providers = 1\n", []string{"q.toml:1:13: providers: 1 is an integer, want a table"}},
		{"a provider", "providers.x = \"command\"\n", []string{`q.toml:1:16: providers.x: "command" is a string, want a table`}},
		{"gates", "gates = [1]\n", []string{"q.toml:1:10: gates: got an array, want a table"}},
		{"array of tables", "[[providers]]\ntype = \"command\"\n", []string{"q.toml:1: providers: got an array of tables, want a table"}},
		{"rule params", "gates.g.rules = [{ id = \"r\", kind = \"regex\", level = \"fail\", params = \"x\" }]\n",
			[]string{`q.toml:1:62: gates.g.rules[0].params: "x" is a string, want a table`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := errorsOf(t, tc.file); !slices.Equal(got, tc.want) {
				t.Errorf("errors:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestIntRange pins the range check the decoder leaves out: an integer too
// large for a 32-bit int (Pi Zero and Pi 1) would wrap around silently.
func TestIntRange(t *testing.T) {
	const text = `
[defaults]
token_budget = 5000000000
max_tries = -3000000000
max_agent_runs = 2147483647
[providers.x]
type = "command"
argv = ["x"]
output_cap = 5000000000
[[gates.g.rules]]
id = "l"
kind = "evidence-length"
level = "fail"
params = { max = 5000000000 }
`
	f := &file{name: "q.toml", data: []byte(text)}
	if _, err := toml.Decode(text, &f.tree); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range f.report(f.outOfRange(32)) {
		got = append(got, e.Error())
	}
	want := []string{
		"q.toml:3:16: defaults.token_budget: 5000000000 is out of range (-2147483648..2147483647)",
		"q.toml:4:13: defaults.max_tries: -3000000000 is out of range (-2147483648..2147483647)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("32 bits:\n got %q\nwant %q", got, want)
	}
	if p := f.outOfRange(64); len(p) != 0 {
		t.Errorf("64 bits: got %v, want nothing", p)
	}
}

func TestPathString(t *testing.T) {
	for _, tc := range []struct {
		p    path
		want string
	}{
		{path{{"daemon", -1}, {"tick", -1}}, "daemon.tick"},
		{path{{"gates", -1}, {"g", -1}, {"rules", 2}, {"id", -1}}, "gates.g.rules[2].id"},
		{path{{"providers", -1}, {"My LLM", -1}}, `providers."My LLM"`},
		{path{{"providers", -1}, {`a.b"[0]`, -1}, {"type", -1}}, `providers."a.b\"[0]".type`},
		{path{{"gates", -1}, {"", -1}}, `gates.""`},
	} {
		if got := tc.p.String(); got != tc.want {
			t.Errorf("String(): got %s, want %s", got, tc.want)
		}
		back, ok := parseKey(tc.want)
		if !ok || !reflect.DeepEqual(back, tc.p) {
			t.Errorf("parseKey(%s): got %v, %v, want %v", tc.want, back, ok, tc.p)
		}
	}
	for _, bad := range []string{"", "a.", `"a`, "a[x]", "a[1", "a[1]b"} {
		if p, ok := parseKey(bad); ok {
			t.Errorf("parseKey(%q) = %v, want no path", bad, p)
		}
	}
}

// TestSchemaHasEveryField pins that the sample the schema is derived from
// reaches every field of Config: a field it leaves nil would have no
// suggestion, no type to name in messages, and no check of its case.
func TestSchemaHasEveryField(t *testing.T) {
	var want []string
	var fields func(t reflect.Type, prefix string)
	fields = func(t reflect.Type, prefix string) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch {
		case t.Kind() == reflect.Map && t.Elem().Kind() == reflect.Interface:
			want = append(want, prefix+"."+anyName)
			return
		case t.Kind() == reflect.Map:
			want = append(want, prefix+"."+anyName)
			fields(t.Elem(), prefix+"."+anyName)
			return
		case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
			fields(t.Elem(), prefix)
			return
		case t.Kind() != reflect.Struct || t == reflect.TypeFor[Duration]():
			return
		}
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ",")
			if name == "" || name == "-" {
				continue
			}
			key := strings.TrimPrefix(prefix+"."+name, ".")
			want = append(want, key)
			fields(t.Field(i).Type, key)
		}
	}
	fields(reflect.TypeFor[Config](), "")
	slices.Sort(want)
	var got []string
	for _, k := range knownKeys().keys {
		got = append(got, k.String())
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("schema keys:\n got %q\nwant %q", got, want)
	}
}

// TestLocatorFallsBack pins that a position the locator cannot trust is
// left out rather than wrong.
func TestLocatorFallsBack(t *testing.T) {
	l := newLocator("[a]\nb = 1\n[[c]]\nd = 1\n[[c]]\nd = 2\n")
	for _, tc := range []struct {
		key        string
		line       int
		own, found bool
	}{
		{"a.b", 2, true, true},
		{"a.x", 1, false, true}, // not written: its table's header
		{"c[0].d", 4, true, true},
		{"c[1].d", 6, true, true},
		{"c[0]", 3, true, true},
		{"c[5].d", 0, false, false},
		{"z", 0, false, false},
	} {
		p, ok := parseKey(tc.key)
		if !ok {
			t.Fatalf("parseKey(%s)", tc.key)
		}
		pos, own := l.find(p)
		if pos.Line != tc.line || own != tc.own {
			t.Errorf("find(%s): got line %d own %v, want line %d own %v", tc.key, pos.Line, own, tc.line, tc.own)
		}
	}
	if pos, _ := newLocator("not = [toml").find(path{{"not", -1}}); pos.Line != 0 {
		t.Errorf("a locator over a broken file found line %d", pos.Line)
	}
}

// FuzzParse pins that Parse never panics, never accepts a file the toml
// decoder refuses, and that what it accepts validates.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"", "[daemon]\ntick = \"5s\"\n", "tick = 1979-05-27\n", "[daemon]\ntick = 1979-05-27T07:32:00Z\n",
		"gates.g.rules = [1, { id = \"a\" }]\n", "[[gates.g.rules]]\n[[gates.g.rules]]\nid = 3\n",
		"providers.x = { type = \"command\", argv = [[1]] }\n", "[judge]\nlight = []\n",
		"a.b.c.d = 1\n", "[\"quoted.key\"]\nx = 1\n", "[gpio]\ngreen = 99999999999999\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		c, err := Parse([]byte(text), "f.toml")
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error does not wrap ErrInvalid: %v", err)
			}
			return
		}
		if _, derr := toml.Decode(text, Default()); derr != nil {
			t.Fatalf("accepted a file the decoder refuses (%v)", derr)
		}
		if verr := c.Validate(); verr != nil {
			t.Fatalf("accepted a config that does not validate: %v", verr)
		}
	})
}

// TestEveryProblemAtOnce pins that no class of problem hides another: an
// unknown key or a value of the wrong type is reported with the
// validation of the rest of the file (the required keys a table leaves
// out), all in file order; a misspelt key is not reported missing again.
func TestEveryProblemAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		file string
		want []string
	}{
		{"an unknown key and a judge without its keys", "[daemon]\ntik = \"5s\"\n\n[judge]\nlight = { provider = \"llm\", model = \"m\" }\n",
			[]string{
				"q.toml:2: unknown key daemon.tik (did you mean daemon.tick?)",
				"q.toml:4: judge.heavy.provider: missing; name a provider configured under [providers]",
				"q.toml:4: judge.heavy.model: missing; the model name is part of the judge's cache fingerprint",
				`q.toml:4: judge.template: missing; use "v1"`,
				"q.toml:4: judge.canaries: missing; how many known-bad pairs to mix into every batch of fresh work (at least 1), e.g. canaries = 2",
				"q.toml:4: judge.canary_threshold: missing; how many canaries a judge may miss before its batch escalates (0 up to judge.canaries - 1), e.g. canary_threshold = 0",
				`q.toml:5:11: judge.light.provider: "llm" is not a configured provider (none configured); demo and external cannot judge`,
			}},
		{"a wrong type and a provider without its type", "[daemon]\nmax_parallel = \"two\"\n\n[providers.x]\nargv = [\"/bin/true\"]\n",
			[]string{
				`q.toml:2:17: daemon.max_parallel: "two" is a string, want an integer`,
				"q.toml:4: providers.x.type: missing; use command, openai, claude-code or codex",
			}},
		{"a wrong type inside a table the validation still checks", "[providers.x]\ntype = \"command\"\nargv = \"/bin/true\"\ntimeout = \"0s\"\n[gpio]\nred = 17\n",
			[]string{
				`q.toml:3:9: providers.x.argv: "/bin/true" is a string, want an array`,
				"q.toml:4:12: providers.x.timeout: must be longer than 0s",
				"q.toml:6:7: gpio.red: BCM 17 is already gpio.green; each function needs its own pin",
			}},
		{"a misspelt key is not missing too", "[providers.x]\ntype = \"command\"\nargs = [\"/bin/true\"]\n",
			[]string{"q.toml:3: unknown key providers.x.args (did you mean providers.x.argv?)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := errorsOf(t, tc.file); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("errors:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}
