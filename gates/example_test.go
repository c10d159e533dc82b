package gates_test

import (
	"fmt"

	"github.com/questbox/questbox/gates"
)

func ExampleParseAnswer() {
	raw := []byte("I compared three engines.\n\n```json\n" +
		`{"verdict": "promising", "evidence": "Tesseract jpn: 91% on 40 invoices",` +
		` "citations": [{"source": "bench.csv", "quote": "tesseract,0.91"}],` +
		` "new_directions": ["try PaddleOCR"]}` +
		"\n```\n")
	a, facts := gates.ParseAnswer(raw)
	fmt.Println(a.Verdict, len(facts))

	_, facts = gates.ParseAnswer([]byte(`{"verdict": "maybe", "evidence": 3, "citations": [], "new_directions": []}`))
	for _, f := range facts {
		fmt.Println(f)
	}
	// Output:
	// promising 0
	// FAIL contract @ verdict: expected one of promising|dead|conclusion, got "maybe"
	// FAIL contract @ evidence: expected string, got number 3
}

func ExampleCatalog_Evaluate() {
	in := gates.Input{
		Raw:        []byte(`{"verdict": "conclusion", "evidence": "PaddleOCR wins on every invoice we tried.", "citations": [], "new_directions": ["Try Tesseract"]}`),
		Role:       "scout",
		Hypothesis: "try tesseract",
	}
	fmt.Println(gates.DefaultCatalog().Evaluate(in))
	// Output:
	// FAIL
	//   FAIL fresh-directions @ new_directions[0]: expected a direction not already explored, got "Try Tesseract" repeats this node's hypothesis
	//   REVIEW citations-present @ citations: expected at least one citation for a conclusion, got none
}

// A placeholder answer trips two rules. The regex rule supersedes the
// length rule, so it is reported as the root cause, and the feedback text
// (the same bytes everywhere it is shown) says what to clear.
func ExampleCatalog_Report_supersedes() {
	cat, err := gates.LoadCatalog([]gates.RuleSpec{
		{ID: "contract", Kind: "contract", Level: "fail"},
		{ID: "evidence-length", Kind: "evidence-length", Level: "fail", Params: map[string]any{"min": 20, "max": 2000}},
		{ID: "no-placeholder", Kind: "regex", Level: "fail",
			Params:     map[string]any{"field": "evidence", "pattern": `(?i)\bTODO\b`, "mode": "must_not_match"},
			Supersedes: []string{"evidence-length"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	r := cat.Report(gates.Input{Role: "scout",
		Raw: []byte(`{"verdict": "promising", "evidence": "TODO", "citations": [], "new_directions": []}`)})
	fmt.Println(r.Verdict.Outcome)
	fmt.Println(r.Feedback)
	// Output:
	// FAIL
	// root cause: FAIL no-placeholder @ evidence: expected text not matching /(?i)\bTODO\b/, got it contains "TODO"
	// side branch: FAIL evidence-length @ evidence: expected between 20 and 2000 characters, got 4 characters: "TODO"
	// to flip the verdict to PASS, clear: no-placeholder, evidence-length
}
