package gates

import (
	"encoding/binary"
	"strings"
	"unicode/utf8"
)

// parseAnswerFast reads the located JSON text of a worker answer in one
// pass, for the common case: a valid answer written plainly. It returns
// ok=false as soon as anything is unusual — invalid UTF-8, a member that
// is unknown, repeated, missing or of the wrong kind, a name with an escape,
// a \u escape of a surrogate, a verdict outside the three words, a blank
// citation or new direction, a list over MaxListItems, anything that is not
// JSON — and ParseAnswer then takes the slow path (encoding/json), which
// explains the problem in its facts. So it accepts only answers the slow
// path accepts, and returns the same Answer for them (answerscan_test.go
// and FuzzParseAnswerFast check both against the slow path).
//
// The slow path decodes the answer four times over (validate, tokens,
// members, the strict decode); this was a fifth of an evaluation.
func parseAnswerFast(text []byte) (Answer, bool) {
	if !utf8.Valid(text) {
		return Answer{}, false
	}
	sc := answerScanner{b: text, s: string(text)}
	var a Answer
	present, ok := sc.fields(func(name string) (k int, ok bool) {
		switch name {
		case "verdict":
			a.Verdict, ok = sc.str()
			return 0, ok && (a.Verdict == VerdictPromising || a.Verdict == VerdictDead || a.Verdict == VerdictConclusion)
		case "evidence":
			a.Evidence, ok = sc.str()
			return 1, ok
		case "citations":
			a.Citations, ok = sc.citations()
			return 2, ok
		case "new_directions":
			a.NewDirections, ok = sc.strs()
			return 3, ok
		}
		return -1, false
	})
	if !ok || present != 0b1111 || !sc.end() {
		return Answer{}, false
	}
	return a, true
}

// answerScanner reads JSON text b (s is the same bytes as a string, so
// that unescaped strings are substrings of it rather than copies).
type answerScanner struct {
	b []byte
	s string
	i int
}

func (sc *answerScanner) ws() {
	for sc.i < len(sc.s) && isSpace(sc.s[sc.i]) {
		sc.i++
	}
}

func (sc *answerScanner) eat(c byte) bool {
	if sc.i < len(sc.s) && sc.s[sc.i] == c {
		sc.i++
		return true
	}
	return false
}

// name reads a member name without escapes.
func (sc *answerScanner) name() (string, bool) {
	if !sc.eat('"') {
		return "", false
	}
	start := sc.i
	end := sc.plainEnd()
	if end >= len(sc.s) || sc.s[end] != '"' {
		return "", false
	}
	sc.i = end + 1
	return sc.s[start:end], true
}

const (
	lo7  = 0x0101010101010101
	hi7  = 0x8080808080808080
	qx8  = lo7 * '"'
	bsx8 = lo7 * '\\'
)

// plainEnd returns the index of the first byte from sc.i that ends the
// plain part of a string: a quote, a backslash or a control character
// (len(s) when there is none). It looks at eight bytes at a time.
func (sc *answerScanner) plainEnd() int {
	i := sc.i
	for ; i+8 <= len(sc.b); i += 8 {
		x := binary.LittleEndian.Uint64(sc.b[i:])
		if (lessBytes(x, 0x20)|zeroBytes(x^qx8)|zeroBytes(x^bsx8))&hi7 != 0 {
			break // a byte of x is < 0x20, '"' or '\\'
		}
	}
	for ; i < len(sc.s); i++ {
		if c := sc.s[i]; c < 0x20 || c == '"' || c == '\\' {
			return i
		}
	}
	return i
}

// str reads a JSON string as encoding/json would decode it, declining a
// \u escape of a surrogate (which encoding/json pairs or replaces).
func (sc *answerScanner) str() (string, bool) {
	if !sc.eat('"') {
		return "", false
	}
	start := sc.i
	end := sc.plainEnd()
	if end < len(sc.s) && sc.s[end] == '"' {
		sc.i = end + 1
		return sc.s[start:end], true
	}
	var b strings.Builder
	b.WriteString(sc.s[start:end])
	i := end
	for i < len(sc.s) {
		c := sc.s[i]
		switch {
		case c == '"':
			sc.i = i + 1
			return b.String(), true
		case c < 0x20:
			return "", false
		case c != '\\':
			sc.i = i
			e := sc.plainEnd()
			b.WriteString(sc.s[i:e])
			i = e
			continue
		}
		n, ok := unescape(sc.s[i:], &b)
		if !ok {
			return "", false
		}
		i += n
	}
	return "", false
}

// unescape writes to b the character of the escape sequence that e starts
// with (e[0] is '\\') and returns the sequence's length; ok is false for
// a sequence encoding/json would refuse, or a \u escape of a surrogate.
func unescape(e string, b *strings.Builder) (n int, ok bool) {
	if len(e) < 2 {
		return 0, false
	}
	if c, ok := simpleEscape(e[1]); ok {
		b.WriteByte(c)
		return 2, true
	}
	if e[1] != 'u' || len(e) < 6 {
		return 0, false
	}
	r, ok := hex4(e[2:6])
	if !ok || 0xD800 <= r && r <= 0xDFFF {
		return 0, false
	}
	b.WriteRune(r)
	return 6, true
}

// simpleEscape is the byte a one-letter JSON escape (\n, \", ...) stands for.
func simpleEscape(c byte) (byte, bool) {
	switch c {
	case '"', '\\', '/':
		return c, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	}
	return 0, false
}

// hex4 reads four hexadecimal digits, either case.
func hex4(h string) (rune, bool) {
	r := rune(0)
	for i := range len(h) {
		c := h[i]
		var v byte
		switch {
		case '0' <= c && c <= '9':
			v = c - '0'
		case 'a' <= c && c <= 'f':
			v = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			v = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, true
}

// strs reads an array of non-blank strings (new_directions).
func (sc *answerScanner) strs() ([]string, bool) {
	out := []string{}
	ok := sc.list(func() bool {
		s, ok := sc.str()
		out = append(out, s)
		return ok && strings.TrimSpace(s) != ""
	})
	return out, ok
}

// citations reads an array of citation objects with exactly a non-blank
// source and quote each.
func (sc *answerScanner) citations() ([]Citation, bool) {
	out := []Citation{}
	ok := sc.list(func() bool {
		var c Citation
		present, ok := sc.fields(func(name string) (k int, ok bool) {
			switch name {
			case "source":
				c.Source, ok = sc.str()
				return 0, ok && strings.TrimSpace(c.Source) != ""
			case "quote":
				c.Quote, ok = sc.str()
				return 1, ok && strings.TrimSpace(c.Quote) != ""
			}
			return -1, false
		})
		out = append(out, c)
		return ok && present == 0b11
	})
	return out, ok
}

// fields reads a JSON object whose member names have no escapes. For each
// member, read(name) reads the value and returns the member's number k
// (0..63), or declines with k < 0 or ok = false. fields returns the set of
// members present (bit k for member k), and declines a repeated member.
func (sc *answerScanner) fields(read func(name string) (k int, ok bool)) (present uint64, ok bool) {
	sc.ws()
	if !sc.eat('{') {
		return 0, false
	}
	for {
		sc.ws()
		name, ok := sc.name()
		if !ok {
			return 0, false
		}
		sc.ws()
		if !sc.eat(':') {
			return 0, false
		}
		sc.ws()
		k, ok := read(name)
		if !ok || k < 0 || present&(1<<k) != 0 {
			return 0, false
		}
		present |= 1 << k
		sc.ws()
		if sc.eat(',') {
			continue
		}
		return present, sc.eat('}')
	}
}

// list reads a JSON array of at most MaxListItems elements, calling item
// to read each; an empty array is fine.
func (sc *answerScanner) list(item func() bool) bool {
	if !sc.eat('[') {
		return false
	}
	sc.ws()
	if sc.eat(']') {
		return true
	}
	for n := 1; ; n++ {
		sc.ws()
		if n > MaxListItems || !item() {
			return false
		}
		sc.ws()
		if sc.eat(',') {
			continue
		}
		return sc.eat(']')
	}
}

// end reports whether nothing but white space is left.
func (sc *answerScanner) end() bool {
	sc.ws()
	return sc.i == len(sc.s)
}
