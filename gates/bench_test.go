package gates

import (
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
