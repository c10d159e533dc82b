package gates

import (
	"strings"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// NormalizeText returns the comparison key of s used to decide whether two
// pieces of text say the same thing: Unicode NFKC, zero-width and other format
// characters (Unicode category Cf, such as U+200B and U+FEFF) removed, full
// case folding, and every run of white space collapsed to one space, trimmed.
// It is for comparison only; never show its result in place of the original.
func NormalizeText(s string) string {
	s = norm.NFKC.String(s)
	s = strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, s)
	s = cases.Fold().String(s) // a Caser is stateful: one per call
	return strings.Join(strings.Fields(s), " ")
}
