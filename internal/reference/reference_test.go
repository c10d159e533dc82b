package reference

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// sample is a package as the pages read them: fields documented alone,
// by block and by line; handlers registered bare, wrapped and inline.
const sample = `package sample

import "net/http"

// MQTT is the broker (docs/design.md, "MQTT").
type MQTT struct {
	// ClientID defaults to "questbox-<device_id>" (see [Config.MQTTClientID]).
	ClientID string
	Username string

	// CAFile, CertFile and KeyFile configure TLS.
	CAFile   string
	CertFile string
	// Other is documented alone.
	Other string

	// BCM 2..27, or -1 for "not fitted".
	Green int // default BCM 17
	Amber int // default BCM 27
}

// Codes.
const (
	// CodeInvalid: the request is malformed. HTTP 400.
	CodeInvalid = "invalid"
	CodeLine    = "line" // said on its line
	notString   = 3
)

type Server struct{ mux *http.ServeMux }

func (s *Server) routes() {
	m := s.mux
	m.HandleFunc("GET /api/quests", s.questList)
	m.HandleFunc("POST /api/quests", s.write(s.questNew))
	m.HandleFunc("GET /app.js", s.asset("app.js"))
	m.HandleFunc("GET /healthz", s.api.ServeHTTP)
	// Anything else is not found.
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {})
}

// questList lists the quests. Nothing is created.
func (s *Server) questList(w http.ResponseWriter, r *http.Request) {}

// questNew creates a quest (docs/design.md, "The tick"; see quest.go).
func (s *Server) questNew(w http.ResponseWriter, r *http.Request) {}

func (s *Server) write(h http.HandlerFunc) http.HandlerFunc { return h }

// asset serves an embedded file.
func (s *Server) asset(name string) http.HandlerFunc { return nil }

type Other struct{}

// questList of another type is not the server's.
func (o *Other) questList() {}
`

func parseSample(t *testing.T) *Source {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "sample.go"), []byte(sample), 0o644); err != nil {
		t.Fatal(err)
	}
	// A test file is not the package's documentation.
	if err := os.WriteFile(filepath.Join(dir, "sample_test.go"), []byte("package sample\n\n// Hidden is a test's.\ntype Hidden struct{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Parse(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestField(t *testing.T) {
	s := parseSample(t)
	for _, tc := range []struct{ field, want string }{
		{"ClientID", `ClientID defaults to "questbox-<device_id>".`},
		{"Username", ""}, // the comment above ClientID is ClientID's own
		{"CAFile", "CAFile, CertFile and KeyFile configure TLS."},
		{"CertFile", "CAFile, CertFile and KeyFile configure TLS."},
		{"Other", "Other is documented alone."},
		{"Green", `BCM 2..27, or -1 for "not fitted". default BCM 17`},
		{"Amber", `BCM 2..27, or -1 for "not fitted". default BCM 27`},
		{"Missing", ""},
	} {
		if got := Text(s.Field("MQTT", tc.field)); got != tc.want {
			t.Errorf("Field(MQTT, %s) = %q, want %q", tc.field, got, tc.want)
		}
	}
	if got := Text(s.Type("MQTT")); got != "MQTT is the broker." {
		t.Errorf("Type(MQTT) = %q", got)
	}
	if got := s.Type("Hidden"); got != "" {
		t.Errorf("a test file's type was read: %q", got)
	}
}

func TestStringConsts(t *testing.T) {
	got := parseSample(t).StringConsts()
	want := []Const{{"CodeInvalid", "invalid", "CodeInvalid: the request is malformed. HTTP 400.\n"}, {"CodeLine", "line", "said on its line\n"}}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestRoutes(t *testing.T) {
	got, err := parseSample(t).Routes()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 {
		t.Fatalf("got %d routes, want 5: %+v", len(got), got)
	}
	for i, want := range []Route{
		{Pattern: "GET /api/quests", Handler: "questList", Doc: "questList lists the quests. Nothing is created.\n"},
		{Pattern: "POST /api/quests", Handler: "questNew", Wrappers: []string{"write"}, Doc: "questNew creates a quest (docs/design.md, \"The tick\"; see quest.go).\n"},
		{Pattern: "GET /app.js", Handler: "asset", Doc: "asset serves an embedded file.\n"},
		{Pattern: "GET /healthz"},
		{Pattern: "/", Doc: "Anything else is not found.\n"},
	} {
		g := got[i]
		if g.Pattern != want.Pattern || g.Handler != want.Handler || !slices.Equal(g.Wrappers, want.Wrappers) || g.Doc != want.Doc {
			t.Errorf("route %d: got %+v, want %+v", i, g, want)
		}
	}
	if s := Sentence(got[1].Doc); s != "questNew creates a quest." {
		t.Errorf("Sentence = %q", s)
	}
	if p := Paragraph("A does b\n(see [X]).\n\nHow it does it.\n"); p != "A does b." {
		t.Errorf("Paragraph = %q", p)
	}
	if s := Sentence("A is b, e.g. c. Then d."); s != "A is b, e.g. c." {
		t.Errorf("Sentence = %q", s)
	}
}

func TestText(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"Tick is the period (docs/design.md, \"The tick\"). Default 60s.", "Tick is the period. Default 60s."},
		{"Pins (docs/design.md, \"The LEDs\", \"The consent button\").", "Pins."},
		{"Vendor names it (both types; docs/design.md, \"Privacy egress\"): local.", "Vendor names it (both types): local."},
		{"Team is one kind (docs/design.md, \"Teams\", `quest new --teams`).", "Team is one kind (`quest new --teams`)."},
		{"Socket is the path (see [Config.SocketPath]).", "Socket is the path."},
		{"A default: see [Config.VendorOf].", "A default."},
		{"By the rule (engine.CheckRoles): team needs owner.", "By the rule: team needs owner."},
		{"Counts (see Status.Findings).", "Counts."},
		{"Roles ([roles.NAME], see roles.go).", "Roles ([roles.NAME])."},
		{"Kind ([Kinds]; `questbox rules` lists them).", "Kind (`questbox rules` lists them)."},
		{"Default [DefaultLimit] on [*Error].", "Default DefaultLimit on *Error."},
		{"Keep (PEM) and [gates.NAME] as written.", "Keep (PEM) and [gates.NAME] as written."},
		{"One rule, for example:\n\n\t[[rules]]\n\tid = \"x\"\n\n\tid = \"y\"\n\nThen more.", "One rule. Then more."},
	} {
		if got := Text(tc.doc); got != tc.want {
			t.Errorf("Text(%q) = %q, want %q", tc.doc, got, tc.want)
		}
	}
}

func TestCellAndCode(t *testing.T) {
	if got := Cell("a | b <data>\nc `<base>/x` <y>"); got != "a \\| b \\<data> c `<base>/x` \\<y>" {
		t.Errorf("Cell = %q", got)
	}
	for in, want := range map[string]string{"": "", "x": "`x`", "a`b": "``a`b``", "`x`": "`` `x` ``", "a|b": "`a\\|b`"} {
		if got := Code(in); got != want {
			t.Errorf("Code(%q) = %q, want %q", in, got, want)
		}
	}
	var b strings.Builder
	Table(&b, []string{"k", "v"}, [][]string{{"a", "1"}})
	if b.String() != "| k | v |\n|---|---|\n| a | 1 |\n" {
		t.Errorf("Table wrote %q", b.String())
	}
}

func TestLint(t *testing.T) {
	if err := Lint("fine\nall of it"); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"see docs/design.md, \"The tick\"", "in presets.go"} {
		if err := Lint("ok\n" + bad); err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("Lint(%q) = %v, want an error at line 2", bad, err)
		}
	}
}

func TestPackageOfThisModule(t *testing.T) {
	s, err := Package("github.com/questbox/questbox/internal/reference")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s.Func("", "Header"), "Header is the top") {
		t.Errorf("Func(Header) = %q", s.Func("", "Header"))
	}
	if _, err := Package("example.com/other"); err == nil {
		t.Error("a package of another module was read")
	}
}

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "page.md")
	Check(t, path, []byte("a\nb\n"), true)
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "a\nb\n" {
		t.Fatalf("update wrote %q, %v", got, err)
	}
	ft := &fakeT{TB: t}
	Check(ft, path, []byte("a\nb\n"), false)
	if ft.failed != "" {
		t.Errorf("the same page failed: %s", ft.failed)
	}
	Check(ft, path, []byte("a\nc\n"), false)
	if !strings.Contains(ft.failed, "+ c\n") || !strings.Contains(ft.failed, "- b\n") || !strings.Contains(ft.failed, Regenerate) {
		t.Errorf("a changed page reported %q", ft.failed)
	}
}

// fakeT records a failure instead of failing.
type fakeT struct {
	testing.TB
	failed string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Errorf(format string, args ...any) {
	f.failed += fmt.Sprintf(format, args...)
}
