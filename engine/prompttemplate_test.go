package engine

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"text/template"
)

// The role prompt templates left Go's text/template for the smaller
// language of engine/prompttmpl (to keep the binary small: text/template made
// the linker keep every exported method in the binary). These tests hold
// the promise docs/configuration.md makes: a template the new language accepts
// renders the very bytes text/template renders from it, over the same
// PromptData. Only the tests import text/template.

// promptTemplates are the templates of docs/configuration.md, of the tests of
// engine, config and cmd/questbox, and one of each construct the language
// has.
var promptTemplates = []string{
	// docs/configuration.md and the other packages' tests.
	"{{.Parts.Contract}}",
	"{{.Parts.Default}}",
	"POC {{.Node.ID}}\n{{.Parts.Contract}}",
	"OWNER TEMPLATE for {{.Quest.ID}}, try {{.Node.Try}} of {{.Node.MaxTries}}\n{{.Parts.Locked}}{{.Parts.Proposals}}{{.Parts.Contract}}",
	"SCOUT {{.Node.ID}} of {{.Quest.ID}}: {{.Node.Hypothesis}} (try {{.Node.Try}} of {{.Node.MaxTries}})\n{{.Parts.Contract}}",
	"{{.Quest.Direction}} {{.Node.Hypothesis}} {{range .Ancestors}}…{{end}} {{.Parts.Contract}}",
	"{{.Node.Hypothesis}}",
	"{{if .Feedback}}…{{else if .Parent.ID}}…{{else}}…{{end}}",
	"{{with .Feedback}}Fix: {{.}}{{else}}…{{end}}",
	"{{range .Ancestors}}- {{.ID}}: {{.Hypothesis}}{{else}}(none){{end}}",
	"{{/* a comment */}}",
	// Every construct.
	"{{.Parts.Header}}{{.Parts.Ancestors}}{{.Parts.Feedback}}{{.Parts.Proposals}}{{.Parts.Locked}}{{.Parts.Contract}}",
	"You are the {{.Node.Role}} of {{.Quest.Name}} ({{.Quest.Mode}}, {{.Quest.ID}}).\nGoal: {{.Quest.Direction}}\n",
	"{{if .Feedback}}Fix this: {{.Feedback}}{{else}}First try.{{end}}\n",
	"{{if .Parent.ID}}Parent {{.Parent.ID}} ({{.Parent.Role}}, {{.Parent.Status}}): {{.Parent.Hypothesis}}{{else if .Locked}}locked{{else}}root{{end}}",
	"{{with .Feedback}}Rejected: {{.}}{{end}}{{with .Parent}}{{.ID}}@{{.Depth}}{{end}}",
	"{{with .Feedback}}{{.}}{{else with .Parent.ID}}parent {{.}}{{else}}nothing{{end}}",
	"Ancestors:\n{{range .Ancestors}}- {{.ID}} ({{.Role}}, {{.Status}}, depth {{.Depth}}): {{.Hypothesis}}\n{{if .Evidence}}  evidence: {{.Evidence}}\n{{end}}{{else}}(none)\n{{end}}",
	"{{range .Proposals -}}\n  * {{.ID}}: {{.Hypothesis}}\n{{- end}}\n{{range .Locked}}{{.ID}} {{.Verdict}} {{.Evidence}} {{.Try}} {{.MaxTries}}{{end}}",
	"{{- /* a comment, trimmed */ -}}\n\n  {{.Node.ID}}  \n\n{{- /* multi\nline */}}\n{{- if .Node.Try}} try {{.Node.Try -}} {{end}}",
	"{{range .Ancestors}}{{with .Evidence}}[{{.}}]{{else}}[no evidence for {{.ID}}]{{end}}{{end}}",
	"{{if .Ancestors}}{{range .Ancestors}}{{if .Verdict}}{{.Verdict}}{{else if .Evidence}}e{{else}}-{{end}}{{end}}{{end}}",
	"{{with .Quest}}{{.ID}}/{{.Name}}{{end}} {{with .Parts}}{{.Contract}}{{end}} {{with .Locked}}{{range .}}{{.ID}}{{end}}{{end}}",
	"{{ .Node.ID }}{{\t.Node.Role\n}}{{if\n.Feedback }}f{{ end }}",
	"}} {{.Node.ID}} { {{/**/}} -}} {{- .Node.Depth -}} x\n",
}

// promptDatas are the data the templates render: a first try at the root,
// a retry deep down, an owner's, and text that a template engine might
// escape or choke on.
func promptDatas() []PromptData {
	nodes := func(n int, prefix string) []PromptNode {
		var out []PromptNode
		for i := range n {
			out = append(out, PromptNode{ID: fmt.Sprintf("n%d", i+1), Role: RoleScout, Status: "explored",
				Hypothesis: prefix + " hypothesis", Verdict: []string{"", "promising", "dead"}[i%3],
				Evidence: []string{"", "found <b>it</b> & more", "x"}[(i+1)%3], Depth: i})
		}
		return out
	}
	parts := PromptParts{Header: "H\n", Ancestors: "A\n", Feedback: "F\n", Proposals: "P\n", Locked: "L\n", Contract: "C\n", Default: "H\nA\nF\nP\nL\nC\n"}
	return []PromptData{
		{Quest: PromptQuest{ID: "q1", Name: "ocr", Direction: "find OCR", Mode: ModeTeam},
			Node: PromptNode{ID: "n1", Role: RoleScout, Status: "running", Hypothesis: "try tesseract", Try: 1, MaxTries: 3}},
		{Quest: PromptQuest{ID: "q2", Name: `quo"ted`, Direction: "{{.Node.ID}} is text here", Mode: ModeSolo},
			Node:      PromptNode{ID: "n9", Role: RolePOC, Status: "running", Hypothesis: "日本語の請求書 ü", Depth: 3, Try: 2, MaxTries: 2},
			Parent:    nodes(1, "parent")[0],
			Ancestors: nodes(3, "ancestor"), Feedback: "evidence too short\n  and uncited\t", Parts: parts},
		{Quest: PromptQuest{ID: "q3", Mode: ModeTeam}, Node: PromptNode{ID: "n5", Role: RoleOwner, Try: 1, MaxTries: 1},
			Proposals: nodes(2, "proposal"), Locked: nodes(4, "locked"), Parts: parts},
		{},
	}
}

// readmeTemplate is the example template of docs/configuration.md's
// section on roles (the fenced block after "For example:").
func readmeTemplate(t testing.TB) string {
	t.Helper()
	readme, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	const open, fence = "  For example:\n\n  ```\n", "  ```\n"
	_, rest, ok := strings.Cut(string(readme), open)
	block, _, closed := strings.Cut(rest, fence)
	if !ok || !closed || !strings.Contains(block, "{{range") {
		t.Fatalf("docs/configuration.md has no example template (a fenced block after %q with a {{range}})", open)
	}
	var text strings.Builder
	for line := range strings.Lines(block) {
		text.WriteString(strings.TrimPrefix(line, "  "))
	}
	return text.String()
}

// TestPromptTemplateMatchesTextTemplate renders every template over every
// PromptData with both engines.
func TestPromptTemplateMatchesTextTemplate(t *testing.T) {
	datas := promptDatas()
	for i, text := range append(promptTemplates, readmeTemplate(t)) {
		ours, err := ParsePromptTemplate("t.tmpl", text)
		if err != nil {
			t.Errorf("template %d %q: %v", i, text, err)
			continue
		}
		for j := range datas {
			want, err := renderTextTemplate(text, &datas[j])
			if err != nil {
				t.Fatalf("template %d %q: text/template: %v", i, text, err)
			}
			if got := ours.Render(&datas[j]); got != want {
				t.Errorf("template %d %q over data %d:\ngot  %q\nwant %q", i, text, j, got, want)
			}
		}
	}
}

func renderTextTemplate(text string, d *PromptData) (string, error) {
	tmpl, err := template.New("t").Option("missingkey=error").Parse(text)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	err = tmpl.Execute(&b, d)
	return b.String(), err
}

// TestPromptSchemaHasEveryField: every exported field of PromptData, found
// by reflection, can be read by a template and reads that very field (each
// holds a value of its own), so a field added to PromptData without its
// line in promptDataType fails here.
func TestPromptSchemaHasEveryField(t *testing.T) {
	var d PromptData
	var text strings.Builder
	n := 0
	// fill gives every string and int under v a value of its own and,
	// when emit, adds an action reading it to the template.
	var fill func(v reflect.Value, path string, emit bool)
	fill = func(v reflect.Value, path string, emit bool) {
		out := &text
		if !emit {
			out = &strings.Builder{}
		}
		n++
		switch v.Kind() {
		case reflect.String:
			v.SetString(fmt.Sprintf("%s#%d", path, n))
			fmt.Fprintf(out, "{{%s}}\n", path)
		case reflect.Int:
			v.SetInt(int64(n))
			fmt.Fprintf(out, "{{%s}}\n", path)
		case reflect.Struct:
			for i := range v.NumField() {
				fill(v.Field(i), path+"."+v.Type().Field(i).Name, emit)
			}
		case reflect.Slice:
			v.Set(reflect.MakeSlice(v.Type(), 2, 2))
			fmt.Fprintf(out, "{{range %s}}", path)
			fill(v.Index(0), "", emit)
			fill(v.Index(1), "", false)
			fmt.Fprintf(out, "{{end}}")
		default:
			t.Fatalf("%s is a %s: teach this test and prompttmpl that kind", path, v.Kind())
		}
	}
	fill(reflect.ValueOf(&d).Elem(), "", true)
	src := text.String()
	ours, err := ParsePromptTemplate("every.tmpl", src)
	if err != nil {
		t.Fatalf("%v\n(the template:\n%s)", err, src)
	}
	want, err := renderTextTemplate(src, &d)
	if err != nil {
		t.Fatal(err)
	}
	if got := ours.Render(&d); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// FuzzPromptTemplate: whatever text the new language accepts, text/template
// accepts too and renders the same bytes over every PromptData.
func FuzzPromptTemplate(f *testing.F) {
	for _, text := range promptTemplates {
		f.Add(text)
	}
	for _, text := range []string{"{{.Node.Nope}}", "{{printf \"%s\" .Feedback}}", "{{- else -}}", "{{/* x */ -}}", "{{ -}}", "{{- -}}", "{{-3}}", "a {{- /*"} {
		f.Add(text)
	}
	datas := promptDatas()
	f.Fuzz(func(t *testing.T, text string) {
		ours, err := ParsePromptTemplate("f.tmpl", text)
		if err != nil {
			return
		}
		for j := range datas {
			want, err := renderTextTemplate(text, &datas[j])
			if err != nil {
				t.Fatalf("%q parsed, but text/template says: %v", text, err)
			}
			if got := ours.Render(&datas[j]); got != want {
				t.Fatalf("%q over data %d:\ngot  %q\nwant %q", text, j, got, want)
			}
		}
	})
}

// BenchmarkPromptTemplate renders docs/configuration.md's example template over an
// owner's data with each engine: a dispatch's cost of a role template.
func BenchmarkPromptTemplate(b *testing.B) {
	text := readmeTemplate(b)
	d := promptDatas()[2]
	b.Run("prompttmpl", func(b *testing.B) {
		tmpl, err := ParsePromptTemplate("b.tmpl", text)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			tmpl.Render(&d)
		}
	})
	b.Run("text/template", func(b *testing.B) {
		tmpl := template.Must(template.New("b").Parse(text))
		b.ReportAllocs()
		for b.Loop() {
			var out strings.Builder
			if err := tmpl.Execute(&out, &d); err != nil {
				b.Fatal(err)
			}
		}
	})
}
