package gates

import (
	"regexp"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// The prefilter and the whole-literal match give exactly the regex's
// answer: whether it matches, and where (the fact quotes the match).
func TestPrefilterAgreesWithTheRegexOnRandomTexts(t *testing.T) {
	patterns := []string{`(?i)\bguaranteed`, `(?i)\bTODO`, `91%`, `(?i)as an AI`, `(?i)\bkelvin`, `(?i)\bsure\b`,
		`(?i)\bI think`, `(?i)\b2026`, `\bexact\b`, `(?i)\b_x`, `(?i)%\b`, `(?i)\bpaddleocr`, `(?i)benchmark\b`,
		`^(promising|dead|conclusion)$`, `(?i)café`, `x+y`, `(lorem)\s+ipsum`, `(?i)(\bword)`, `(?i)\b(word)`}
	// Texts built from pieces near the patterns' literals, word and
	// non-word neighbours, the runes RE2 folds to k and s, multi-byte and
	// invalid bytes.
	piece := rapid.SampledFrom([]string{"guaranteed", "GUARANTEED", "Guaranteed", "todo", "ToDo", "91%", "91 %", "as an ai",
		"AS AN AI", "kelvin", "\u212Aelvin", "sure", "\u017Fure", "SURE", "i think", "I THINK", "2026", "exact", "EXACT",
		"_x", "_X", "%", "paddleocr", "PaddleOCR", "benchmark", "BENCHMAR\u212A", "word", "x", "y", "lorem ipsum",
		" ", "  ", "_", "a", "Z", "9", "-", ".", "\n", "é", "日本", "\xff", "\xc3", "café", "CAFÉ"})
	res := map[string]*regexp.Regexp{}
	rules := map[string]RegexCheck{}
	for _, p := range patterns {
		res[p] = regexp.MustCompile(p)
		r, err := Regex("raw", p, false)
		if err != nil {
			t.Fatal(err)
		}
		rules[p] = r
	}
	rapid.Check(t, func(t *rapid.T) {
		var text string
		for _, s := range rapid.SliceOfN(piece, 0, 8).Draw(t, "pieces") {
			text += s
		}
		for _, p := range patterns {
			want := res[p].FindStringIndex(text)
			r := rules[p]
			v := fieldVal{where: "answer", text: text, memo: new(textMemo)}
			var got []int
			switch {
			case !r.hasPre || !v.usable(r.pre):
				got = want
			case r.pre.whole:
				got = r.pre.match(text, v.lowered())
			case r.pre.mayMatch(text, v.lowered()):
				got = want
			}
			if !slices.Equal(got, want) {
				t.Fatalf("pattern %q on %q: prefilter says %v, the regex %v", p, text, got, want)
			}
		}
	})
}

// Which patterns get the whole-literal match: the common word rules do.
func TestPrefilterShapes(t *testing.T) {
	for _, c := range []struct {
		pattern   string
		ok, whole bool
	}{
		{`(?i)\bguaranteed`, true, true}, {`(?i)\bsure\b`, true, true}, {`91%`, true, true}, {`(?i)\bbenchmark`, true, true},
		{`(lorem)\s+ipsum`, true, false}, {`^(promising|dead|conclusion)$`, false, false}, {`(?i)café`, false, false},
		{`(?i)(\bword)`, true, true}, {`(?i)\b(word)`, true, false},
	} {
		p, ok := literalOf(c.pattern)
		if ok != c.ok || p.whole != c.whole {
			t.Errorf("%q: got ok %v whole %v, want %v %v", c.pattern, ok, p.whole, c.ok, c.whole)
		}
	}
}
