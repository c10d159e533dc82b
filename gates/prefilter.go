package gates

import (
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// A literal prefilter answers "can this regular expression match this
// text at all?" without running it: most regex rules look for a word
// ("(?i)\bguaranteed"), and most answers do not contain it. From the
// pattern's syntax tree it takes a literal that every match contains
// (the pattern itself, or the longest literal of a top-level
// concatenation); when the text does not contain that literal, no match
// exists and the regex is not run. When the literal is there, the regex
// decides as before, so a rule's facts are exactly what they were.
//
// Case-insensitive literals are checked against the text with its ASCII
// letters lowered, which is exact only when the literal is ASCII and none
// of its letters folds to a non-ASCII rune: RE2 matches 'k' with U+212A
// KELVIN SIGN and 's' with U+017F LONG S. A pattern whose literal has
// those (or no literal at all) gets no prefilter.

// prefilter is a literal every match of a pattern contains.
type prefilter struct {
	lit  string // lowered when fold
	fold bool   // case-insensitive: compare with the ASCII-lowered text
}

// literalOf returns the prefilter of pattern, ok false when it has none
// that is safe to use.
func literalOf(pattern string) (prefilter, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return prefilter{}, false
	}
	re = re.Simplify()
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	var best *syntax.Regexp
	switch re.Op {
	case syntax.OpLiteral:
		best = re
	case syntax.OpConcat:
		for _, s := range re.Sub {
			for s.Op == syntax.OpCapture {
				s = s.Sub[0]
			}
			if s.Op == syntax.OpLiteral && (best == nil || len(s.Rune) > len(best.Rune)) {
				best = s
			}
		}
	}
	if best == nil || len(best.Rune) == 0 {
		return prefilter{}, false
	}
	fold := best.Flags&syntax.FoldCase != 0
	var b strings.Builder
	for _, r := range best.Rune {
		switch {
		case r == utf8.RuneError:
			// Matches an invalid byte too, which the text's bytes
			// would not show.
			return prefilter{}, false
		case fold && (r >= utf8.RuneSelf || r == 'k' || r == 'K' || r == 's' || r == 'S'):
			return prefilter{}, false
		case fold:
			b.WriteByte(lowerASCII(byte(r)))
		default:
			b.WriteRune(r)
		}
	}
	return prefilter{lit: b.String(), fold: fold}, true
}

// mayMatch reports whether text (and lowered, its ASCII-lowered form)
// contains the literal.
func (p prefilter) mayMatch(text, lowered string) bool {
	if p.fold {
		return strings.Contains(lowered, p.lit)
	}
	return strings.Contains(text, p.lit)
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// asciiLower returns s with its ASCII letters lowered (other bytes as
// they are), without a copy when it has none to lower.
func asciiLower(s string) string {
	i := 0
	for i < len(s) && !('A' <= s[i] && s[i] <= 'Z') {
		i++
	}
	if i == len(s) {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		b[i] = lowerASCII(b[i])
	}
	return string(b)
}
