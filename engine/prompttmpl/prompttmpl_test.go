package prompttmpl

import (
	"errors"
	"strings"
	"testing"
)

// The engine's tests render its PromptData with this package and with Go's
// text/template and compare the bytes; these pin the language on a small
// schema of their own: what it renders, and what it refuses, where.

type doc struct {
	Title string
	N     int
	Items []entry
	Sub   entry
}

type entry struct {
	Name string
	Size int
}

var (
	entryType = NewStruct("entry",
		Str("Name", func(e *entry) string { return e.Name }),
		Num("Size", func(e *entry) int { return e.Size }))
	docType = NewStruct("doc",
		Str("Title", func(d *doc) string { return d.Title }),
		Num("N", func(d *doc) int { return d.N }),
		Slice("Items", entryType, func(d *doc) []entry { return d.Items }),
		Sub("Sub", entryType, func(d *doc) *entry { return &d.Sub }))
)

func TestRender(t *testing.T) {
	full := &doc{Title: "T", N: -3, Items: []entry{{"a", 1}, {"b", 0}}, Sub: entry{"s", 7}}
	empty := &doc{}
	for _, tc := range []struct {
		name, text string
		data       *doc
		want       string
	}{
		{"text only", "plain {text} }}", full, "plain {text} }}"},
		{"fields", "{{.Title}} {{ .N }} {{.Sub.Name}}{{.Sub.Size}}", full, "T -3 s7"},
		{"if true", "{{if .Title}}yes{{else}}no{{end}}", full, "yes"},
		{"if false", "{{if .Title}}yes{{else}}no{{end}}", empty, "no"},
		{"if struct is true", "{{if .Sub}}yes{{end}}", empty, "yes"},
		{"else if chain", "{{if .Title}}t{{else if .N}}n{{else if .Items}}i{{else}}none{{end}}", &doc{N: 1}, "n"},
		{"range", "{{range .Items}}[{{.Name}}={{.Size}}]{{end}}", full, "[a=1][b=0]"},
		{"range else", "{{range .Items}}x{{else}}no items{{end}}", empty, "no items"},
		{"range nested if", "{{range .Items}}{{if .Size}}{{.Name}}{{end}}{{end}}", full, "a"},
		{"with", "{{with .Title}}<{{.}}>{{else}}none{{end}}", full, "<T>"},
		{"with else with", "{{with .Title}}{{.}}{{else with .Sub}}{{.Name}}{{end}}", full, "T"},
		{"with false keeps dot", "{{with .Title}}{{.}}{{else}}{{.N}}{{end}}", empty, "0"},
		{"trim markers", "a  \n{{- .Title -}}\n\t b", full, "aTb"},
		{"trim only one side", "a {{- .Title}} b {{.Title -}} c", full, "aT b Tc"},
		{"minus without space is no marker", "a {{.Title}}-b", full, "a T-b"},
		{"comment", "a{{/* {{.Nope}} }} */}}b", full, "ab"},
		{"comment trimmed", "a \n{{- /* c */ -}}\n b", full, "ab"},
		{"multi-line action", "{{if\n.Title\n}}y{{end}}", full, "y"},
		{"unicode", "é {{.Title}} ü", &doc{Title: "日本"}, "é 日本 ü"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := Parse("t", tc.text, docType)
			if err != nil {
				t.Fatal(err)
			}
			if got := tmpl.Render(tc.data); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// Every refusal names the line and column of the action at fault and what
// it uses that the language does not have.
func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		line, col  int
		want       string
	}{
		{"unknown field", "x\n  {{.Sub.Colour}}", 2, 3, "entry has no field Colour (its fields: Name, Size)"},
		{"field of a string", "{{.Title.Len}}", 1, 1, "a string has no field Len"},
		{"struct printed", "{{.Sub}}", 1, 1, "entry, which cannot be printed; print one of its fields: Name, Size"},
		{"list printed", "{{.Items}}", 1, 1, "range over it: {{range .Items}}"},
		{"element printed", "{{range .Items}}{{.}}{{end}}", 1, 17, ". is a entry, which cannot be printed"},
		{"range over a string", "{{range .Title}}{{end}}", 1, 1, "only a list can be ranged over"},
		{"function", "é {{printf \"%d\" .N}}", 1, 3, "constants are not supported"},
		{"function without constants", "{{len .Items}}", 1, 1, "functions (len) are not supported"},
		{"pipeline", "{{.Title | html}}", 1, 1, "pipelines are not supported"},
		{"variable", "{{range $i, $e := .Items}}{{end}}", 1, 1, "variables are not supported"},
		{"parentheses", "{{if (.Title)}}{{end}}", 1, 1, "parentheses are not supported"},
		{"define", "{{define \"x\"}}{{end}}", 1, 1, "constants are not supported"},
		{"template", "{{template x}}", 1, 1, "{{template}} is not supported"},
		{"break", "{{range .Items}}{{break}}{{end}}", 1, 17, "{{break}} is not supported"},
		{"number", "{{3}}", 1, 1, `"3" is not a field`},
		{"identifier", "{{Title}}", 1, 1, `"Title" is not a field`},
		{"empty dot name", "{{.Sub..Name}}", 1, 1, "a dot without a name"},
		{"empty action", "a\n\nb {{ }}", 3, 3, "an empty action"},
		{"two fields", "{{.Title .N}}", 1, 1, "{{.Title .N}} is not supported: an action is a field"},
		{"if without field", "{{if}}{{end}}", 1, 1, "{{if}}: {{if}} takes one field: {{if .Field}}"},
		{"range with two", "{{range .Items .Items}}{{end}}", 1, 1, "{{range}} takes one field"},
		{"unclosed action", "ok\n{{.Title", 2, 1, "unclosed action"},
		{"unclosed comment", "{{/* x }}", 1, 1, "unclosed comment"},
		{"comment before the delimiter", "{{/* x */ }}", 1, 1, "a comment must end with */}}"},
		{"no end", "{{if .N}}\n{{range .Items}}{{end}}", 1, 1, "{{if .N}} has no {{end}}"},
		{"no end after else", "{{if .N}}{{else}}", 1, 1, "has no {{end}}"},
		{"end alone", "a {{end}}", 1, 3, "{{end}} without an {{if}}"},
		{"else alone", "{{else}}", 1, 1, "{{else}} without an {{if}}"},
		{"two elses", "{{if .N}}{{else}}{{else}}{{end}}", 1, 18, "after {{else}}: want {{end}}"},
		{"else if in range", "{{range .Items}}{{else if .N}}{{end}}", 1, 17, "is not supported: use {{end}} or {{else}}"},
		{"else with in if", "{{if .N}}{{else with .Sub}}{{end}}", 1, 10, "is not supported: use {{end}} or {{else}}, {{else if .Field}}"},
		{"field in chained if", "{{if .N}}{{else if .Nope}}{{end}}", 1, 10, "doc has no field Nope"},
		{"field inside range", "{{range .Items}}\n{{.Title}}{{end}}", 2, 1, "entry has no field Title"},
		{"long action cut", "{{ .Title | aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa }}", 1, 1, "{{ .Title | aaaaaaaaaaaaaaaaaaaaaaaaaaaa…: pipelines"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("role.tmpl", tc.text, docType)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want an *Error", err)
			}
			if e.Name != "role.tmpl" || e.Line != tc.line || e.Col != tc.col || !strings.Contains(e.Msg, tc.want) {
				t.Errorf("got %q, want role.tmpl:%d:%d: …%s…", err, tc.line, tc.col, tc.want)
			}
		})
	}
}
