package gates

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func BenchmarkDefaultCatalogEvaluate(b *testing.B) {
	raw := []byte("Here is what I found after comparing the engines.\n\n" +
		fence(withField("evidence", `"`+strings.Repeat("Tesseract jpn scored 91% on 40 invoices. ", 50)+`"`)) +
		"\nLet me know if you need more.\n")
	in := Input{
		Raw: raw, Role: "scout", Direction: "find the most accurate free OCR for Japanese invoices",
		Hypothesis: "tesseract is good enough", Ancestors: []string{"compare open-source OCR engines", "find the most accurate free OCR"},
	}
	c := DefaultCatalog()
	if v := c.Evaluate(in); v.Outcome != OutcomePass {
		b.Fatalf("got %v, want PASS", v)
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		c.Evaluate(in)
	}
}

func BenchmarkParseAnswerMax(b *testing.B) {
	raw := []byte(withField("evidence", `"`+strings.Repeat("x", MaxAnswerBytes-300)+`"`))
	if _, facts := ParseAnswer(raw); len(facts) != 0 {
		b.Fatalf("got %v, want none", facts)
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		ParseAnswer(raw)
	}
}

// benchSpecs returns 20 pure rules of the built-in kinds; about a third of
// them fire on benchAnswer, so the graph has something to decide.
func benchSpecs() []RuleSpec {
	specs := []RuleSpec{
		{ID: "contract", Kind: "contract", Level: "fail"},
		{ID: "evidence-length", Kind: "evidence-length", Level: "fail", Params: map[string]any{"min": 20, "max": 20000}},
		{ID: "fresh-directions", Kind: "fresh-directions", Level: "fail"},
		{ID: "citations-present", Kind: "citations-present", Level: "review"},
		{ID: "limits", Kind: "limits", Level: "fail", Params: map[string]any{"max_citations": 5, "max_new_directions": 3, "max_evidence_bytes": 4000}},
		{ID: "dates", Kind: "dates", Level: "fail", Params: map[string]any{"field": "evidence", "not_future": true}},
	}
	words := []string{"TODO", "lorem", "guaranteed", "Tesseract", "invoices", "probably", "I think", "91%", "as an AI", "cannot",
		"PaddleOCR", "benchmark", "2026"}
	for i, w := range words {
		mode := "must_not_match"
		level := "review"
		if i%2 == 0 {
			level = "fail"
		}
		specs = append(specs, RuleSpec{ID: "regex-" + itoa(i), Kind: "regex", Level: level,
			Params: map[string]any{"field": "evidence", "pattern": `(?i)\b` + w, "mode": mode}})
	}
	specs = append(specs, RuleSpec{ID: "verdict-word", Kind: "regex", Level: "fail", Params: map[string]any{"field": "verdict", "pattern": "^(promising|dead|conclusion)$"}})
	return specs
}

var benchAnswer = []byte("Findings below.\n\n```json\n" +
	`{"verdict": "promising", "evidence": "Tesseract jpn scored 91% on 40 invoices on 2026-11-30; PaddleOCR is probably better on the benchmark.",` +
	` "citations": [{"source": "bench.csv", "quote": "tesseract,0.91"}], "new_directions": ["try PaddleOCR on the same set"]}` + "\n```\n")

func benchInput() Input {
	return Input{Raw: benchAnswer, Role: "scout", Direction: "find the most accurate free OCR for Japanese invoices",
		Hypothesis: "tesseract is good enough", Today: "2026-12-02"}
}

func BenchmarkEvaluate20Rules(b *testing.B) {
	specs := benchSpecs()
	if len(specs) != 20 {
		b.Fatalf("got %d rules, want 20", len(specs))
	}
	c, err := LoadCatalog(specs)
	if err != nil {
		b.Fatal(err)
	}
	in := benchInput()
	b.ReportAllocs()
	for b.Loop() {
		c.Evaluate(in)
	}
}

func BenchmarkGraph20Rules10Edges(b *testing.B) {
	specs := benchSpecs()
	// Ten edges among rules that fire (regex-3 Tesseract, regex-4 invoices,
	// regex-5 probably, regex-7 91%, regex-10 PaddleOCR, regex-11 benchmark,
	// regex-12 2026), including a cycle.
	edges := map[string][]string{
		"regex-3":  {"regex-4", "regex-7"},
		"regex-4":  {"regex-3"},
		"regex-5":  {"regex-11"},
		"regex-10": {"regex-12", "regex-5"},
		"regex-11": {"regex-10"},
		"regex-12": {"regex-3"},
	}
	n := 0
	for i := range specs {
		specs[i].Attacks = edges[specs[i].ID]
		n += len(specs[i].Attacks)
	}
	for i := range specs {
		switch specs[i].ID {
		case "regex-3":
			specs[i].Supersedes = []string{"regex-12"}
			n++
		case "regex-10":
			specs[i].Supersedes = []string{"regex-11"}
			n++
		}
	}
	if len(specs) != 20 || n != 10 {
		b.Fatalf("got %d rules and %d edges, want 20 and 10", len(specs), n)
	}
	c, err := LoadCatalog(specs)
	if err != nil {
		b.Fatal(err)
	}
	in := benchInput()
	if r := c.Report(in); len(r.Defeated) == 0 {
		b.Fatalf("got no defeated rules, want the graph to decide something: %v", r.Verdict)
	}
	b.ReportAllocs()
	for b.Loop() {
		c.Report(in)
	}
}

// The answer sets of testdata/answers (README.md there says what each is).
// The side-by-side comparison with another implementation of the same catalog
// (bench/RESULTS.md, "Gates") reads the same files, so both judge the same
// bytes with the same catalog.
var answerSets = []string{"fires7", "pass", "long-evidence", "malformed", "near-max"}

// answerSetToday is the reference date of every answer set.
const answerSetToday = "2026-12-02"

func answerSetInput(tb testing.TB, name string) Input {
	tb.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "answers", name+".txt"))
	if err != nil {
		tb.Fatal(err)
	}
	in := benchInput()
	in.Raw, in.Today = raw, answerSetToday
	return in
}

// answerSetCatalog loads testdata/answers/catalog.json, with the edges of
// graph-edges.json when graph is set.
func answerSetCatalog(tb testing.TB, graph bool) *Catalog {
	tb.Helper()
	var specs []RuleSpec
	readJSON(tb, "catalog.json", &specs)
	if graph {
		var edges []struct{ From, Kind, To string }
		readJSON(tb, "graph-edges.json", &edges)
		for _, e := range edges {
			for i := range specs {
				if specs[i].ID != e.From {
					continue
				}
				if e.Kind == "attacks" {
					specs[i].Attacks = append(specs[i].Attacks, e.To)
				} else {
					specs[i].Supersedes = append(specs[i].Supersedes, e.To)
				}
			}
		}
	}
	c, err := LoadCatalog(specs)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func readJSON(tb testing.TB, name string, v any) {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "answers", name))
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
}

// BenchmarkAnswerSets evaluates each answer set with the 20-rule catalog,
// by level aggregation (evaluate) and through the defeat graph of
// graph-edges.json (graph).
func BenchmarkAnswerSets(b *testing.B) {
	flat, graph := answerSetCatalog(b, false), answerSetCatalog(b, true)
	for _, name := range answerSets {
		in := answerSetInput(b, name)
		b.Run(name+"/evaluate", func(b *testing.B) {
			b.SetBytes(int64(len(in.Raw)))
			b.ReportAllocs()
			for b.Loop() {
				flat.Evaluate(in)
			}
		})
		b.Run(name+"/graph", func(b *testing.B) {
			b.SetBytes(int64(len(in.Raw)))
			b.ReportAllocs()
			for b.Loop() {
				graph.Report(in)
			}
		})
	}
}

// TestAnswerSets pins what the catalog decides on each answer set (the
// side-by-side comparison checks that the other implementation decides the
// same), and that catalog.json is benchSpecs.
func TestAnswerSets(t *testing.T) {
	want, err := json.Marshal(benchSpecs())
	if err != nil {
		t.Fatal(err)
	}
	var specs []RuleSpec
	readJSON(t, "catalog.json", &specs)
	if got, _ := json.Marshal(specs); string(got) != string(want) {
		t.Errorf("catalog.json is not benchSpecs():\n got %s\nwant %s", got, want)
	}
	flat, graph := answerSetCatalog(t, false), answerSetCatalog(t, true)
	for _, tc := range []struct {
		set         string
		want        Outcome
		fired       string
		graphFired  string
		graphDefeat string
	}{
		{"fires7", OutcomeFail, "regex-3 regex-4 regex-5 regex-7 regex-10 regex-11 regex-12", "regex-3 regex-4 regex-7 regex-10 regex-11", "regex-5 regex-12"},
		{"pass", OutcomePass, "", "", ""},
		{"long-evidence", OutcomeReview, "regex-5", "regex-5", ""},
		{"malformed", OutcomeFail, "contract", "contract", ""},
		{"near-max", OutcomeFail, "evidence-length limits regex-0", "evidence-length limits regex-0", ""},
	} {
		t.Run(tc.set, func(t *testing.T) {
			in := answerSetInput(t, tc.set)
			v := flat.Evaluate(in)
			if v.Outcome != tc.want || ruleIDs(v.Facts) != tc.fired {
				t.Errorf("evaluate: got %v %q, want %v %q", v.Outcome, ruleIDs(v.Facts), tc.want, tc.fired)
			}
			r := graph.Report(in)
			if r.Verdict.Outcome != tc.want || ruleIDs(r.Verdict.Facts) != tc.graphFired || ruleIDs(r.Defeated) != tc.graphDefeat {
				t.Errorf("graph: got %v %q defeated %q, want %v %q defeated %q", r.Verdict.Outcome, ruleIDs(r.Verdict.Facts),
					ruleIDs(r.Defeated), tc.want, tc.graphFired, tc.graphDefeat)
			}
		})
	}
}

func ruleIDs(fs []Fact) string {
	var ids []string
	for _, f := range fs {
		if len(ids) == 0 || ids[len(ids)-1] != f.Rule {
			ids = append(ids, f.Rule)
		}
	}
	return strings.Join(ids, " ")
}

var updateAnswerSets = flag.Bool("update-answer-sets", false, "rewrite testdata/answers/*.golden")

// TestAnswerSetsGolden pins every fact, the feedback and the defeated facts
// of each answer set, byte for byte, so that a faster evaluation cannot
// change a word of what the gate says.
func TestAnswerSetsGolden(t *testing.T) {
	flat, graph := answerSetCatalog(t, false), answerSetCatalog(t, true)
	for _, set := range answerSets {
		in := answerSetInput(t, set)
		var b strings.Builder
		for _, m := range []struct {
			name string
			c    *Catalog
		}{{"evaluate", flat}, {"graph", graph}} {
			r := m.c.Report(in)
			fmt.Fprintf(&b, "== %s: %v\n", m.name, r.Verdict.Outcome)
			for _, f := range r.Verdict.Facts {
				fmt.Fprintf(&b, "fact: %s\n", f)
			}
			for _, f := range r.Defeated {
				fmt.Fprintf(&b, "defeated: %s\n", f)
			}
			fmt.Fprintf(&b, "feedback:\n%s\n", r.Feedback)
		}
		got := b.String()
		file := filepath.Join("testdata", "answers", set+".golden")
		if *updateAnswerSets {
			if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if string(want) != got {
			t.Errorf("%s: the report differs from %s (rerun with -update-answer-sets only if the change is intended):\n%s", set, file, got)
		}
	}
}

// BenchmarkAnswerKinds parses a valid answer of each kind that is not a
// worker's (a council reviewer's, a judge's, an accepter's), fenced after a
// line of prose as agents write them.
func BenchmarkAnswerKinds(b *testing.B) {
	accept := `{"decision": "accept", "reason": "meets the plan", "citations": [{"quote": "92% on the set"}]}`
	for _, tc := range []struct {
		name  string
		parse func(raw []byte) []Fact
		raw   string
	}{
		{"reviewer", func(raw []byte) []Fact { _, f := ParseMemberAnswer(MemberReviewer, raw); return f }, validReviewerJSON},
		{"judge", func(raw []byte) []Fact { _, f := ParseMemberAnswer(MemberJudge, raw); return f }, validJudgeJSON},
		{"accept", func(raw []byte) []Fact { _, f := ParseAcceptAnswer(raw); return f }, accept},
	} {
		raw := []byte("My answer.\n\n" + fence(tc.raw))
		if f := tc.parse(raw); len(f) > 0 {
			b.Fatalf("%s: got %v, want a valid answer", tc.name, f)
		}
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tc.parse(raw)
			}
		})
	}
}
