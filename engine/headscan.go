package engine

import (
	"encoding/json"
	"unicode/utf8"
)

// scanNodeHead reads the fields of nodeHead from a node record, skipping
// the rest (the attempt log, the answer) without decoding it: the tick
// reads the node of every quest it dispatches for, and encoding/json
// spends most of that time on what it then throws away.
//
// It reads the records json.Marshal writes. Anything else — a key that is
// not a Node key as written (encoding/json would match keys regardless of
// case), a number that is not a plain integer, invalid UTF-8 in a field it
// reads, malformed JSON — makes it return false, and the caller decodes
// with encoding/json instead, so the result is always what json.Unmarshal
// gives. A string with escapes is unquoted by encoding/json itself.
func scanNodeHead(raw []byte, h *nodeHead) bool {
	s := headScanner{b: raw}
	s.ws()
	if !s.eat('{') {
		return false
	}
	s.ws()
	if s.eat('}') {
		return s.end()
	}
	for {
		s.ws()
		key, ok := s.key()
		if !ok {
			return false
		}
		// A switch on the converted bytes compares without allocating.
		s.ws()
		if !s.eat(':') {
			return false
		}
		s.ws()
		switch string(key) {
		case "id":
			ok = s.str(&h.ID)
		case "quest":
			ok = s.str(&h.Quest)
		case "parent":
			ok = s.str(&h.Parent)
		case "role":
			ok = s.str(&h.Role)
		case "hypothesis":
			ok = s.str(&h.Hypothesis)
		case "status":
			st := string(h.Status)
			ok = s.str(&st)
			h.Status = Status(st)
		case "feedback":
			ok = s.str(&h.Feedback)
		case "depth":
			ok = s.int(&h.Depth)
		case "tries":
			ok = s.int(&h.Tries)
		case "order":
			ok = s.uint(&h.Order)
		case "attempts", "verdict", "evidence", "citations", "new_directions", "outcome", "facts",
			"claim_hash", "claim", "reason", "runs", "deferrals", "lock_seq", "created", "updated":
			ok = s.skip(0)
		default:
			return false
		}
		if !ok {
			return false
		}
		s.ws()
		if s.eat('}') {
			return s.end()
		}
		if !s.eat(',') {
			return false
		}
	}
}

// headScanner is the cursor of scanNodeHead.
type headScanner struct {
	b []byte
	i int
}

func (s *headScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *headScanner) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *headScanner) end() bool {
	s.ws()
	return s.i == len(s.b)
}

// key reads an object key without escapes.
func (s *headScanner) key() ([]byte, bool) {
	if !s.eat('"') {
		return nil, false
	}
	start := s.i
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			k := s.b[start:s.i]
			s.i++
			return k, true
		case c == '\\' || c < 0x20:
			return nil, false
		}
		s.i++
	}
	return nil, false
}

// str reads a string (or null, which leaves *v as it is, as
// encoding/json does).
func (s *headScanner) str(v *string) bool {
	if s.lit("null") {
		return true
	}
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return false
	}
	start := s.i
	s.i++
	plain := true
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			tok := s.b[start:s.i]
			if plain {
				if !utf8.Valid(tok) {
					return false
				}
				*v = string(tok[1 : len(tok)-1])
				return true
			}
			return json.Unmarshal(tok, v) == nil
		case c == '\\':
			plain = false
			if !s.escape() {
				return false
			}
			continue
		case c < 0x20:
			return false
		}
		s.i++
	}
	return false
}

// escape passes over one escape sequence of a string, checking it.
func (s *headScanner) escape() bool {
	if s.i+1 >= len(s.b) {
		return false
	}
	switch s.b[s.i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.i += 2
		return true
	case 'u':
		if s.i+6 > len(s.b) {
			return false
		}
		for _, h := range s.b[s.i+2 : s.i+6] {
			if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
				return false
			}
		}
		s.i += 6
		return true
	}
	return false
}

func (s *headScanner) lit(w string) bool {
	if len(s.b)-s.i >= len(w) && string(s.b[s.i:s.i+len(w)]) == w {
		s.i += len(w)
		return true
	}
	return false
}

// digits reads a plain integer's digits (after an optional minus) and
// fails on a fraction or an exponent.
func (s *headScanner) digits() (neg bool, v uint64, ok bool) {
	neg = s.eat('-')
	start := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		d := uint64(s.b[s.i] - '0')
		if v > (1<<64-1-d)/10 {
			return false, 0, false
		}
		v = v*10 + d
		s.i++
	}
	if s.i == start || (s.i-start > 1 && s.b[start] == '0') {
		return false, 0, false
	}
	if s.i < len(s.b) {
		switch s.b[s.i] {
		case '.', 'e', 'E':
			return false, 0, false
		}
	}
	return neg, v, true
}

func (s *headScanner) int(p *int) bool {
	if s.lit("null") {
		return true
	}
	neg, v, ok := s.digits()
	const maxInt = uint64(^uint(0) >> 1)
	if !ok || (!neg && v > maxInt) || (neg && v > maxInt+1) {
		return false
	}
	if neg {
		*p = int(-int64(v))
		if v == maxInt+1 {
			*p = -int(maxInt) - 1
		}
		return true
	}
	*p = int(v)
	return true
}

func (s *headScanner) uint(p *uint64) bool {
	if s.lit("null") {
		return true
	}
	neg, v, ok := s.digits()
	if !ok || neg {
		return false
	}
	*p = v
	return true
}

// skip passes over one value, of any kind, checking only its shape.
func (s *headScanner) skip(depth int) bool {
	if depth > 64 || s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		s.i++
		for s.i < len(s.b) {
			switch d := s.b[s.i]; {
			case d == '"':
				s.i++
				return true
			case d == '\\':
				if !s.escape() {
					return false
				}
				continue
			case d < 0x20:
				return false
			}
			s.i++
		}
		return false
	case c == '{' || c == '[':
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		s.i++
		s.ws()
		if s.eat(closing) {
			return true
		}
		for {
			s.ws()
			if c == '{' {
				if _, ok := s.anyKey(); !ok {
					return false
				}
				s.ws()
				if !s.eat(':') {
					return false
				}
				s.ws()
			}
			if !s.skip(depth + 1) {
				return false
			}
			s.ws()
			if s.eat(closing) {
				return true
			}
			if !s.eat(',') {
				return false
			}
		}
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	case c == '-' || ('0' <= c && c <= '9'):
		return s.number()
	}
	return false
}

// number passes over a JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *headScanner) number() bool {
	s.eat('-')
	run := func() int {
		start := s.i
		for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
			s.i++
		}
		return s.i - start
	}
	first := s.i
	n := run()
	if n == 0 || (n > 1 && s.b[first] == '0') {
		return false
	}
	if s.eat('.') && run() == 0 {
		return false
	}
	if s.eat('e') || s.eat('E') {
		if !s.eat('+') {
			s.eat('-')
		}
		if run() == 0 {
			return false
		}
	}
	return true
}

// anyKey passes over an object key, escapes allowed.
func (s *headScanner) anyKey() (struct{}, bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return struct{}{}, false
	}
	return struct{}{}, s.skip(0)
}
