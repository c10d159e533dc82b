package gates

import (
	"html"
	"strings"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Text primitives (docs/design.md, "Text and time primitives"). They are
// comparison keys: never show their result in place of the original text.
//
// Format characters (Unicode category Cf: zero-width space U+200B, zero-width
// (non-)joiners U+200C/U+200D, word joiner U+2060, BOM U+FEFF, soft hyphen
// U+00AD, bidi controls, tag characters) are invisible, so they are the
// classic way to make two strings look the same and compare different, or
// the other way round. The two uses below treat them differently on purpose:
//
//   - Duplicate detection ([NormalizeText], used by fresh-directions) removes
//     them from both sides: "try\u200b X" is a repeat of "try X".
//   - Quote matching ([ContainsQuote]) treats them asymmetrically. Format
//     characters in the SOURCE are ignored (web pages are full of soft
//     hyphens and zero-width joiners that the quoting agent cannot see).
//     Format characters in the QUOTE are kept and must occur in the source at
//     the same place. So a quote that only matches once the source's
//     invisible characters are dropped passes, but a quote carrying invisible
//     characters the source lacks fails: an agent cannot hide a mismatch, or
//     smuggle text past another check, inside a quote that "looks" right.

// NormalizeText returns the comparison key of s used to decide whether two
// pieces of text say the same thing: Unicode NFKC, format characters
// (category Cf, such as U+200B and U+FEFF) removed, full case folding, and
// every run of white space collapsed to one space, trimmed.
func NormalizeText(s string) string {
	if isASCII(s) {
		return normalizeASCII(s)
	}
	return CollapseSpace(cases.Fold().String(StripFormat(norm.NFKC.String(s)))) // a Caser is stateful: one per call
}

// normalizeASCII is NormalizeText for ASCII text, where NFKC changes
// nothing, there are no format characters, case folding is lowering A-Z,
// and the white space is \t \n \v \f \r and space. It returns s itself
// when s is already normal.
func normalizeASCII(s string) string {
	normal := true
	for i := 0; i < len(s) && normal; i++ {
		switch c := s[i]; {
		case 'A' <= c && c <= 'Z', isASCIISpace(c) && (c != ' ' || i == 0 || i == len(s)-1 || s[i+1] == ' '):
			normal = false
		}
	}
	if normal {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isASCIISpace(c) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteByte(lowerASCII(c))
	}
	return b.String()
}

// isASCIISpace reports whether unicode.IsSpace(rune(c)) for an ASCII c.
func isASCIISpace(c byte) bool {
	return c == ' ' || '\t' <= c && c <= '\r'
}

// CollapseSpace replaces every run of Unicode white space with one ASCII
// space and trims both ends. Format characters are not white space.
func CollapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// StripFormat removes every format character (Unicode category Cf).
func StripFormat(s string) string {
	if strings.IndexFunc(s, isFormat) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isFormat(r) {
			return -1
		}
		return r
	}, s)
}

func isFormat(r rune) bool { return unicode.Is(unicode.Cf, r) }

// QuoteKey is the comparison key of a quote: NFKC, case folding and white
// space collapsed, with format characters KEPT (see the package notes).
func QuoteKey(s string) string {
	return CollapseSpace(cases.Fold().String(norm.NFKC.String(s)))
}

// ContainsQuote reports whether quote occurs in source after normalisation:
// NFKC (width variants match), case folding and white space collapsing on
// both sides; format characters ignored in source but significant in quote.
// A quote that is empty after normalisation is never contained.
func ContainsQuote(source, quote string) bool {
	q := QuoteKey(quote)
	if q == "" {
		return false
	}
	if strings.IndexFunc(q, isFormat) < 0 {
		return strings.Contains(NormalizeText(source), q)
	}
	return strings.Contains(QuoteKey(source), q)
}

// MissingTokens returns the tokens that do not occur in text under
// [ContainsQuote], in the order given. Blank tokens are ignored; a token
// given twice is reported twice.
func MissingTokens(text string, tokens []string) []string {
	var missing []string
	key := NormalizeText(text)
	for _, t := range tokens {
		if strings.TrimSpace(t) == "" {
			continue
		}
		q := QuoteKey(t)
		ok := false
		if strings.IndexFunc(q, isFormat) < 0 {
			ok = strings.Contains(key, q)
		} else {
			ok = ContainsQuote(text, t)
		}
		if !ok {
			missing = append(missing, t)
		}
	}
	return missing
}

// HTMLText returns the readable text of an HTML document for quote matching:
// the content of script, style, noscript and template elements and of
// comments dropped, every tag replaced by a space, character references
// decoded. Text without '<' is returned as it is.
func HTMLText(s string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c != '<' || i+1 >= len(s) || !tagStart(s[i+1]) {
			b.WriteByte(c)
			i++
			continue
		}
		if strings.HasPrefix(s[i:], "<!--") {
			end := strings.Index(s[i+4:], "-->")
			if end < 0 {
				break
			}
			i += 4 + end + 3
			b.WriteByte(' ')
			continue
		}
		end := strings.IndexByte(s[i:], '>')
		if end < 0 {
			break
		}
		tag := s[i+1 : i+end]
		i += end + 1
		b.WriteByte(' ')
		if name := hiddenElement(tag); name != "" {
			close := indexFold(s[i:], "</"+name)
			if close < 0 {
				break
			}
			i += close
		}
	}
	return html.UnescapeString(b.String())
}

func tagStart(c byte) bool {
	return c == '/' || c == '!' || c == '?' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// hiddenElement returns the lower-case name of tag if it opens an element
// whose content is not text (script, style, noscript, template).
func hiddenElement(tag string) string {
	name := tag
	if i := strings.IndexAny(name, " \t\r\n/"); i >= 0 {
		name = name[:i]
	}
	name = strings.ToLower(name)
	switch name {
	case "script", "style", "noscript", "template":
		return name
	}
	return ""
}

// indexFold is strings.Index ignoring ASCII case; sub must be lower-case.
func indexFold(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}
