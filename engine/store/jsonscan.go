package store

import (
	"encoding/json"
	"unicode/utf8"
)

// ScanObject reads the JSON object raw key by key, calling field with
// each key and the scanner positioned at its value; field reads the value
// (Str, Int, Uint, Skip) and reports whether it could. It is for the hot
// paths that need a few fields of a record json.Marshal wrote, skipping
// the rest without decoding it.
//
// It reads what json.Marshal writes. Anything else — a key with escapes,
// a number that is not a plain integer where one is read, invalid UTF-8
// in a string read, malformed JSON — or a field that returns false makes
// it return false, and the caller decodes with encoding/json instead, so
// the result is always what json.Unmarshal gives. A string with escapes
// is unquoted by encoding/json itself.
func ScanObject(raw []byte, field func(key []byte, s *Scanner) bool) bool {
	s := Scanner{b: raw}
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
		s.ws()
		if !s.eat(':') {
			return false
		}
		s.ws()
		if !field(key, &s) {
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

// Scanner is the cursor of ScanObject.
type Scanner struct {
	b []byte
	i int
}

func (s *Scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *Scanner) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *Scanner) end() bool {
	s.ws()
	return s.i == len(s.b)
}

// key reads an object key without escapes.
func (s *Scanner) key() ([]byte, bool) {
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

// Str reads a string (or null, which leaves *v as it is, as
// encoding/json does).
func (s *Scanner) Str(v *string) bool { return s.str(v, "", nil) }

// StrLike is Str, setting *v to like itself, without copying the bytes
// read, when the string read is like: a reader that knows what a field
// most likely holds saves an allocation.
func (s *Scanner) StrLike(v *string, like string) bool { return s.str(v, like, nil) }

// StrOf is Str, setting *v to the element of known that the string read
// is, if any, without copying the bytes read: for a field of a few known
// values.
func (s *Scanner) StrOf(v *string, known []string) bool { return s.str(v, "", known) }

// str is Str, StrLike and StrOf.
func (s *Scanner) str(v *string, like string, known []string) bool {
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
				b := tok[1 : len(tok)-1]
				if string(b) == like {
					*v = like
					return true
				}
				for _, k := range known {
					if string(b) == k {
						*v = k
						return true
					}
				}
				*v = string(b)
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
func (s *Scanner) escape() bool {
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

func (s *Scanner) lit(w string) bool {
	if len(s.b)-s.i >= len(w) && string(s.b[s.i:s.i+len(w)]) == w {
		s.i += len(w)
		return true
	}
	return false
}

// digits reads a plain integer's digits (after an optional minus) and
// fails on a fraction or an exponent.
func (s *Scanner) digits() (neg bool, v uint64, ok bool) {
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

// Int reads a plain integer (or null, which leaves *p as it is).
func (s *Scanner) Int(p *int) bool {
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

// Uint reads a plain unsigned integer (or null).
func (s *Scanner) Uint(p *uint64) bool {
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

// Skip passes over one value, of any kind, checking only its shape.
func (s *Scanner) Skip() bool { return s.skip(0) }

// Count passes over an array, setting *n to how many values it holds
// (null leaves *n as it is); any other value fails.
func (s *Scanner) Count(n *int) bool {
	if s.lit("null") {
		return true
	}
	if s.i >= len(s.b) || s.b[s.i] != '[' {
		return false
	}
	s.i++
	s.ws()
	k := 0
	if !s.eat(']') {
		for {
			s.ws()
			if !s.skip(1) {
				return false
			}
			k++
			s.ws()
			if s.eat(']') {
				break
			}
			if !s.eat(',') {
				return false
			}
		}
	}
	*n = k
	return true
}

// skip passes over one value, of any kind, checking only its shape.
func (s *Scanner) skip(depth int) bool {
	if depth > 64 || s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		return s.skipString()
	case c == '{' || c == '[':
		return s.skipContainer(depth)
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

// skipString passes over a string, checking its escapes.
func (s *Scanner) skipString() bool {
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
}

// skipContainer passes over an object or an array and what it holds.
func (s *Scanner) skipContainer(depth int) bool {
	c := s.b[s.i]
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
}

// number passes over a JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *Scanner) number() bool {
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
func (s *Scanner) anyKey() (struct{}, bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return struct{}{}, false
	}
	return struct{}{}, s.skip(0)
}
