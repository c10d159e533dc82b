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
