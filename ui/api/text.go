package api

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// An agent's text (an answer's evidence, its citations, an owner's
// summary) reaches people on every face, and an agent writes whatever it
// likes: 256 KiB of it, HTML, a terminal's escape sequences. Every face
// shows it capped and inert (docs/results.md):
//
//   - the views cap it (Clip) and say what was left out (CutNote); the
//     whole text stays in the store, and `questbox export` has it;
//   - the views write what could drive a terminal or reorder text as
//     readable escapes (Printable), so no face, the phone's and Home
//     Assistant's included, ever gets a control character; the JSON is
//     valid (Clip leaves no broken UTF-8);
//   - the dashboard puts it in the page as text nodes, never as HTML;
//   - the CLI prints all it shows through Printable too.

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
// boundary, and how many bytes of s it left out. Bytes that are not UTF-8
// stay as they are, for Printable to show.
func Clip(s string, limit int) (string, int) {
	if len(s) <= limit {
		return s, 0
	}
	keep := max(limit, 0)
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:keep], len(s) - keep
}

// shown is what a view shows of an agent's text s: its start within
// limit bytes (Clip), Printable (lines kept when lines is set), and how
// many bytes were left out.
func shown(s string, limit int, lines bool) (string, int) {
	v, cut := Clip(s, limit)
	return Printable(v, lines), cut
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

// Printable is the one rule for showing text an agent (or a person)
// wrote, on every face: it writes what could drive a terminal, or hide or
// reorder text, as escapes a person can read. The control characters
// (C0, DEL, C1; the newline and the tab are kept when lines is set), the
// controls of bidirectional text, the zero-width characters, the byte
// order mark and the line and paragraph separators become \xNN or
// \uNNNN, and every byte that is not UTF-8 \xNN. HTML is left as it is:
// it is text to every face (the dashboard never parses it). Text that
// needs no escape is returned as it is.
func Printable(s string, lines bool) string {
	plain := true
	for _, r := range s {
		if r == utf8.RuneError || escaped(r, lines) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && w == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case escaped(r, lines) && r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case escaped(r, lines):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+w])
		}
		i += w
	}
	return b.String()
}

// escaped reports whether Printable writes r as an escape.
func escaped(r rune, lines bool) bool {
	switch {
	case r == '\n' || r == '\t':
		return !lines
	case unicode.IsControl(r): // C0, DEL, C1
		return true
	case r == 0x061c, r >= 0x200b && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2060 && r <= 0x2069, r == 0xfeff:
		return true // the controls of bidirectional text, zero-width characters, the byte order mark
	case r == 0x2028 || r == 0x2029:
		return true // the line and paragraph separators
	}
	return false
}
