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
	var (
		a    Answer
		seen [4]bool
	)
	sc.ws()
	if !sc.eat('{') {
		return Answer{}, false
	}
	for {
		sc.ws()
		name, ok := sc.name()
		if !ok {
			return Answer{}, false
		}
		sc.ws()
		if !sc.eat(':') {
			return Answer{}, false
		}
		sc.ws()
		k := -1
		switch name {
		case "verdict":
			k = 0
			a.Verdict, ok = sc.str()
			ok = ok && (a.Verdict == VerdictPromising || a.Verdict == VerdictDead || a.Verdict == VerdictConclusion)
		case "evidence":
			k = 1
			a.Evidence, ok = sc.str()
		case "citations":
			k = 2
			a.Citations, ok = sc.citations()
		case "new_directions":
			k = 3
			a.NewDirections, ok = sc.strs()
		}
		if k < 0 || !ok || seen[k] {
			return Answer{}, false
		}
		seen[k] = true
		sc.ws()
		if sc.eat(',') {
			continue
		}
		if !sc.eat('}') {
			return Answer{}, false
		}
		break
	}
	sc.ws()
	if sc.i != len(sc.s) || seen != [4]bool{true, true, true, true} {
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
		if i+1 >= len(sc.s) {
			return "", false
		}
		switch sc.s[i+1] {
		case '"', '\\', '/':
			b.WriteByte(sc.s[i+1])
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			if i+6 > len(sc.s) {
				return "", false
			}
			r := rune(0)
			for _, h := range []byte(sc.s[i+2 : i+6]) {
				var v byte
				switch {
				case '0' <= h && h <= '9':
					v = h - '0'
				case 'a' <= h && h <= 'f':
					v = h - 'a' + 10
				case 'A' <= h && h <= 'F':
					v = h - 'A' + 10
				default:
					return "", false
				}
				r = r<<4 | rune(v)
			}
			if 0xD800 <= r && r <= 0xDFFF {
				return "", false
			}
			b.WriteRune(r)
			i += 6
			continue
		default:
			return "", false
		}
		i += 2
	}
	return "", false
}

// strs reads an array of non-blank strings (new_directions).
func (sc *answerScanner) strs() ([]string, bool) {
	if !sc.eat('[') {
		return nil, false
	}
	out := []string{}
	sc.ws()
	if sc.eat(']') {
		return out, true
	}
	for {
		sc.ws()
		s, ok := sc.str()
		if !ok || strings.TrimSpace(s) == "" || len(out) == MaxListItems {
			return nil, false
		}
		out = append(out, s)
		sc.ws()
		if sc.eat(',') {
			continue
		}
		return out, sc.eat(']')
	}
}

// citations reads an array of citation objects with exactly a non-blank
// source and quote each.
func (sc *answerScanner) citations() ([]Citation, bool) {
	if !sc.eat('[') {
		return nil, false
	}
	out := []Citation{}
	sc.ws()
	if sc.eat(']') {
		return out, true
	}
	for {
		sc.ws()
		c, ok := sc.citation()
		if !ok || len(out) == MaxListItems {
			return nil, false
		}
		out = append(out, c)
		sc.ws()
		if sc.eat(',') {
			continue
		}
		return out, sc.eat(']')
	}
}

func (sc *answerScanner) citation() (Citation, bool) {
	var (
		c          Citation
		src, quote bool
	)
	if !sc.eat('{') {
		return c, false
	}
	for {
		sc.ws()
		name, ok := sc.name()
		if !ok {
			return c, false
		}
		sc.ws()
		if !sc.eat(':') {
			return c, false
		}
		sc.ws()
		var v string
		if v, ok = sc.str(); !ok || strings.TrimSpace(v) == "" {
			return c, false
		}
		switch {
		case name == "source" && !src:
			c.Source, src = v, true
		case name == "quote" && !quote:
			c.Quote, quote = v, true
		default:
			return c, false
		}
		sc.ws()
		if sc.eat(',') {
			continue
		}
		return c, sc.eat('}') && src && quote
	}
}
