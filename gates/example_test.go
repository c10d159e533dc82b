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
