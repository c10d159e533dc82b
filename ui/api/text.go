package api

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// An agent's text (an answer's evidence, its citations, an owner's
// summary) reaches people on every face, and an agent writes whatever it
// likes: 256 KiB of it, HTML, a terminal's escape sequences. Every face
// shows it capped and inert (docs/results.md):
//
//   - the views cap it (Clip) and say what was left out (CutNote); the
//     whole text stays in the store, and `questbox export` has it;
//   - JSON carries it as valid JSON (encoding/json escapes control
//     characters; Clip leaves no broken UTF-8);
//   - the dashboard puts it in the page as text nodes, never as HTML;
//   - the CLI prints it through Printable, so a terminal sees no control
//     character.

// Caps on what a view shows of an agent's text, in bytes.
const (
	// EvidenceCap is how much of a finding's evidence, and of an owner's
	// closing statement, a result shows: its start.
	EvidenceCap = 4 << 10
	// HypothesisCap bounds a hypothesis, a citation's quote and a
	// reason; SourceCap a citation's source.
	HypothesisCap = 1 << 10
	SourceCap     = 512
	// CitationsCap is how many citations of a finding a result shows.
	CitationsCap = 20
)

// Clip returns the start of s that fits in limit bytes, cut on a rune
// boundary and with no broken UTF-8 (each invalid byte becomes U+FFFD,
// which counts towards the limit), and how many bytes of s it left out.
func Clip(s string, limit int) (string, int) {
	v := s
	if !utf8.ValidString(v) {
		v = strings.ToValidUTF8(v, "\uFFFD")
	}
	if len(v) <= limit {
		return v, max(0, len(s)-len(v))
	}
	keep := max(limit, 0)
	for keep > 0 && !utf8.RuneStart(v[keep]) {
		keep--
	}
	return v[:keep], max(0, len(s)-keep)
}

// CutNote is what a face shows after text that Clip cut short: "(cut:
// 252 KiB more; `questbox export` has it all)"; "" when nothing was cut.
func CutNote(cut int) string {
	if cut <= 0 {
		return ""
	}
	size := fmt.Sprintf("%d bytes", cut)
	if cut >= 1<<10 {
		size = fmt.Sprintf("%d KiB", (cut+1<<10-1)>>10)
	}
	return "(cut: " + size + " more; `questbox export` has it all)"
}

// Printable returns s as a terminal may show it: every control character
// but the newline and the tab (C0, DEL, C1), every character that
// reorders or hides text (the bidirectional controls, zero-width
// characters, the byte order mark) and every byte that is not UTF-8 is
// written as an escape a person can read (\x1b, \u202e, \xff); the rest
// is unchanged.
func Printable(s string) string {
	i := strings.IndexFunc(s, unprintable)
	if i < 0 && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case r < 0x80 && unprintable(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unprintable(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[:size])
		}
		s = s[size:]
	}
	return b.String()
}

// unprintable reports whether r must not reach a terminal as it is (see
// Printable).
func unprintable(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x200b && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2060 && r <= 0x2069, r == 0xfeff:
		return true
	}
	return false
}
