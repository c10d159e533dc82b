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
// exists and the regex is not run.
//
// A pattern that is nothing but that literal, with an optional \b on
// either side (the common "forbidden word" rule), is matched without the
// regex at all: the leftmost occurrence whose word boundaries hold is the
// match the regex would find (RE2's \b is ASCII: a word character is
// [0-9A-Za-z_]). Any other pattern whose literal is present runs the
// regex as before. Either way a rule's facts are exactly what they were
// (prefilter_test.go checks this against the regex on random texts).
//
// Case-insensitive literals are compared with the text's ASCII letters
// lowered, which is exact when the literal is ASCII: RE2 folds an ASCII
// letter only to its other case, except 'k' (also U+212A KELVIN SIGN) and
// 's' (also U+017F LONG S). A literal with 'k' or 's' is used only on a
// text that has neither of those two runes; on one that has, the regex
// decides.

// prefilter is a literal every match of a pattern contains.
type prefilter struct {
	lit  string // lowered when fold
	fold bool   // case-insensitive: compare with the ASCII-lowered text
	// ks: the folded literal has 'k' or 's', whose folds include a
	// non-ASCII rune.
	ks bool
	// whole: the pattern is the literal alone, with \b before (pre) and
	// after (post) when set.
	whole     bool
	pre, post bool
}

// literalOf returns the prefilter of pattern, ok false when it has none
// that is safe to use.
func literalOf(pattern string) (prefilter, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return prefilter{}, false
	}
	best, whole, pre, post := requiredLiteral(uncapture(re.Simplify()))
	if best == nil || len(best.Rune) == 0 {
		return prefilter{}, false
	}
	p := prefilter{fold: best.Flags&syntax.FoldCase != 0, whole: whole, pre: pre && whole, post: post && whole}
	lit, ks, ok := literalText(best.Rune, p.fold)
	if !ok {
		return prefilter{}, false
	}
	p.lit, p.ks = lit, ks
	return p, true
}

// uncapture is re without the capture groups around it.
func uncapture(re *syntax.Regexp) *syntax.Regexp {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	return re
}

// requiredLiteral returns a literal every match of re contains (nil for
// none): re itself, or the longest literal of a top-level concatenation.
// whole says re is that literal alone, pre and post that a \b stands
// before or after it.
func requiredLiteral(re *syntax.Regexp) (best *syntax.Regexp, whole, pre, post bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return re, true, false, false
	case syntax.OpConcat:
		for _, s := range re.Sub {
			s = uncapture(s)
			if s.Op == syntax.OpLiteral && (best == nil || len(s.Rune) > len(best.Rune)) {
				best = s
			}
		}
		// \b LIT, LIT \b or \b LIT \b (no captures: a capture group
		// changes nothing here, but keep the shape exact).
		subs := re.Sub
		if len(subs) > 0 && subs[0].Op == syntax.OpWordBoundary {
			pre, subs = true, subs[1:]
		}
		if len(subs) > 0 && subs[len(subs)-1].Op == syntax.OpWordBoundary {
			post, subs = true, subs[:len(subs)-1]
		}
		whole = len(subs) == 1 && subs[0] == best
	}
	return best, whole, pre, post
}

// literalText is the literal's runes as the text is compared with them:
// ASCII-lowered when fold, with ks set when that has 'k' or 's'. ok is
// false for a literal the bytes of a text cannot decide: one that has
// utf8.RuneError (it matches an invalid byte too), or a non-ASCII rune
// under fold.
func literalText(runes []rune, fold bool) (lit string, ks, ok bool) {
	var b strings.Builder
	for _, r := range runes {
		switch {
		case r == utf8.RuneError:
			return "", false, false
		case fold && r >= utf8.RuneSelf:
			return "", false, false
		case fold:
			c := lowerASCII(byte(r))
			ks = ks || c == 'k' || c == 's'
			b.WriteByte(c)
		default:
			b.WriteRune(r)
		}
	}
	return b.String(), ks, true
}

// usable reports whether the prefilter is exact on text: a literal with
// 'k' or 's' folded is not when the text has U+212A or U+017F.
func (p prefilter) usable(text string) bool {
	return !p.ks || !hasOddFold(text)
}

// hasOddFold reports whether s has a rune RE2 folds to 'k' or 's' other
// than their ASCII cases.
func hasOddFold(s string) bool {
	return strings.Contains(s, "\u212A") || strings.Contains(s, "\u017F")
}

// mayMatch reports whether text (and lowered, its ASCII-lowered form)
// contains the literal.
func (p prefilter) mayMatch(text, lowered string) bool {
	if p.fold {
		return strings.Contains(lowered, p.lit)
	}
	return strings.Contains(text, p.lit)
}

// match returns the leftmost match of a whole-literal pattern in text,
// as the regex's FindStringIndex does (nil for none).
func (p prefilter) match(text, lowered string) []int {
	hay := text
	if p.fold {
		hay = lowered
	}
	for from := 0; from <= len(hay)-len(p.lit); {
		i := strings.Index(hay[from:], p.lit)
		if i < 0 {
			return nil
		}
		i += from
		j := i + len(p.lit)
		if (!p.pre || boundary(text, i)) && (!p.post || boundary(text, j)) {
			return []int{i, j}
		}
		from = i + 1
	}
	return nil
}

// boundary reports whether RE2's \b holds at byte offset i of text: a
// word character on one side and not on the other. A byte of a
// multi-byte rune (or an invalid one) is not a word character.
func boundary(text string, i int) bool {
	before := i > 0 && isWordByte(text[i-1])
	after := i < len(text) && isWordByte(text[i])
	return before != after
}

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
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
