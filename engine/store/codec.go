package store

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"
)

// A Codec is the binary form of a record type R, driven by one table of
// Fields: the table is the form. Encoding appends a version byte and then
// every field in table order; decoding reads them back in the same order.
// Adding a field to R is adding its entry to the table (at the end, so
// that records written before read as they were, the new field zero) —
// and the domain's round-trip test checks by reflection that every field
// of R has an entry.
//
// The forms: a string as a uvarint length and its bytes; an integer as a
// varint, an unsigned one as a uvarint; a time as a flag byte (0: the zero
// time) and then its Unix seconds (varint) and nanoseconds (uvarint), read
// back in UTC; a list or a map as a uvarint of its length plus one (0 for
// nil, so nil and empty stay apart as they do in JSON), map entries sorted
// by key.
type Codec[R any] struct {
	version byte
	fields  []Field[R]
}

// Field is one entry of a Codec's table. Make it with Text, Int, Uint,
// Time, Texts, Counts or TextMap.
type Field[R any] struct {
	// Name is the field's path in R ("Limits.MaxTries").
	Name string
	enc  func(b []byte, r *R) []byte
	// dec takes and returns the reader by value: an indirect call would
	// move a pointed-to reader to the heap, once per record decoded.
	dec func(d reader, r *R) reader
}

// ErrRecord is the cause of a binary record that does not decode.
var ErrRecord = errors.New("malformed record")

// NewCodec returns the codec of the table fields, whose records start
// with the byte version.
func NewCodec[R any](version byte, fields ...Field[R]) *Codec[R] {
	return &Codec[R]{version: version, fields: fields}
}

// Version is the first byte of the codec's records.
func (c *Codec[R]) Version() byte { return c.version }

// Names lists the fields of the table, in order.
func (c *Codec[R]) Names() []string {
	out := make([]string, len(c.fields))
	for i, f := range c.fields {
		out[i] = f.Name
	}
	return out
}

// Append appends r's record to b.
func (c *Codec[R]) Append(b []byte, r *R) []byte {
	b = append(b, c.version)
	for i := range c.fields {
		b = c.fields[i].enc(b, r)
	}
	return b
}

// Decode reads the record raw into r, which it zeroes first. A record of
// another form, cut short or with bytes past its end is ErrRecord.
func (c *Codec[R]) Decode(raw []byte, r *R) error {
	if len(raw) == 0 || raw[0] != c.version {
		return fmt.Errorf("%w: unknown form", ErrRecord)
	}
	// One string holds the whole record: every string field is a slice
	// of it, so a decode costs one allocation for all its strings.
	d := reader{b: raw[1:], s: string(raw[1:])}
	var zero R
	*r = zero
	for i := range c.fields {
		d = c.fields[i].dec(d, r)
	}
	if d.err == nil && len(d.b) > 0 {
		d.err = fmt.Errorf("%w: %d bytes past its end", ErrRecord, len(d.b))
	}
	return d.err
}

// Text is a string field.
func Text[R any, S ~string](name string, get func(*R) *S) Field[R] {
	return Field[R]{Name: name,
		enc: func(b []byte, r *R) []byte { return appendString(b, string(*get(r))) },
		dec: func(d reader, r *R) reader {
			var s string
			s, d = d.string()
			*get(r) = S(s)
			return d
		}}
}

// Int is a signed integer field (a time.Duration included).
func Int[R any, I ~int | ~int64](name string, get func(*R) *I) Field[R] {
	return Field[R]{Name: name,
		enc: func(b []byte, r *R) []byte { return binary.AppendVarint(b, int64(*get(r))) },
		dec: func(d reader, r *R) reader {
			var v int64
			v, d = d.varint()
			*get(r) = I(v)
			return d
		}}
}

// Uint is an unsigned integer field.
func Uint[R any](name string, get func(*R) *uint64) Field[R] {
	return Field[R]{Name: name,
		enc: func(b []byte, r *R) []byte { return binary.AppendUvarint(b, *get(r)) },
		dec: func(d reader, r *R) reader {
			*get(r), d = d.uvarint()
			return d
		}}
}

// Time is a time field, read back in UTC.
func Time[R any](name string, get func(*R) *time.Time) Field[R] {
	return Field[R]{Name: name,
		enc: func(b []byte, r *R) []byte { return appendTime(b, *get(r)) },
		dec: func(d reader, r *R) reader {
			*get(r), d = d.time()
			return d
		}}
}

// Texts is a list of strings. With emptyIsNil an empty list reads back as
// nil (the fields JSON wrote with omitempty read back so, and still do).
func Texts[R any](name string, get func(*R) *[]string, emptyIsNil bool) Field[R] {
	return Field[R]{Name: name,
		enc: func(b []byte, r *R) []byte {
			ss := *get(r)
			if ss == nil {
				return append(b, 0)
			}
			b = binary.AppendUvarint(b, uint64(len(ss))+1)
			for _, s := range ss {
				b = appendString(b, s)
			}
			return b
		},
		dec: func(d reader, r *R) reader {
			var n int
			n, d = d.length()
			if n == 0 || (emptyIsNil && n == 1) {
				*get(r) = nil
				return d
			}
			ss := make([]string, 0, n-1)
			for range n - 1 {
				var s string
				s, d = d.string()
				ss = append(ss, s)
			}
			*get(r) = ss
			return d
		}}
}

// Counts is a map of names to counts. intern, when set, gives a decoded
// key the bytes of a constant (no allocation per key).
func Counts[R any, K ~string](name string, get func(*R) *map[K]int, intern func(string) K) Field[R] {
	return Field[R]{Name: name,
		enc: func(b []byte, r *R) []byte {
			m := *get(r)
			if m == nil {
				return append(b, 0)
			}
			b = binary.AppendUvarint(b, uint64(len(m))+1)
			var buf [16]K
			for _, k := range sortedKeys(m, buf[:0]) {
				b = appendString(b, string(k))
				b = binary.AppendVarint(b, int64(m[k]))
			}
			return b
		},
		dec: func(d reader, r *R) reader {
			var n int
			if n, d = d.length(); n == 0 {
				return d
			}
			m := make(map[K]int, n-1)
			for range n - 1 {
				var s string
				var v int64
				s, d = d.string()
				v, d = d.varint()
				k := K(s)
				if intern != nil {
					k = intern(s)
				}
				m[k] = int(v)
			}
			*get(r) = m
			return d
		}}
}

// TextMap is a map of strings to strings; an empty one reads back as nil
// (as JSON's omitempty had it).
func TextMap[R any](name string, get func(*R) *map[string]string) Field[R] {
	return Field[R]{Name: name,
		enc: func(b []byte, r *R) []byte {
			m := *get(r)
			if m == nil {
				return append(b, 0)
			}
			b = binary.AppendUvarint(b, uint64(len(m))+1)
			var buf [8]string
			for _, k := range sortedKeys(m, buf[:0]) {
				b = appendString(b, k)
				b = appendString(b, m[k])
			}
			return b
		},
		dec: func(d reader, r *R) reader {
			var n int
			if n, d = d.length(); n <= 1 {
				return d
			}
			m := make(map[string]string, n-1)
			for range n - 1 {
				var k, v string
				k, d = d.string()
				v, d = d.string()
				m[k] = v
			}
			*get(r) = m
			return d
		}}
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, 0)
	}
	b = append(b, 1)
	b = binary.AppendVarint(b, t.Unix())
	return binary.AppendUvarint(b, uint64(t.Nanosecond()))
}

// sortedKeys appends m's keys to keys (a caller's array, so a small map
// costs no allocation) and sorts them.
func sortedKeys[K cmp.Ordered, V any](m map[K]V, keys []K) []K {
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// reader reads a binary record; the first error sticks and every read
// after it returns zero values.
type reader struct {
	b   []byte
	s   string // the record as a string; b is its tail
	err error
}

func (d reader) fail(what string) reader {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s cut short", ErrRecord, what)
	}
	d.b = nil
	return d
}

func (d reader) uvarint() (uint64, reader) {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		return 0, d.fail("a number")
	}
	d.b = d.b[n:]
	return v, d
}

func (d reader) varint() (int64, reader) {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		return 0, d.fail("a number")
	}
	d.b = d.b[n:]
	return v, d
}

// length reads a list or map length plus one (0: nil), bounded by what
// is left of the record (each entry takes at least a byte).
func (d reader) length() (int, reader) {
	n, d := d.uvarint()
	if n > uint64(len(d.b))+1 {
		return 0, d.fail("a list")
	}
	return int(n), d
}

func (d reader) string() (string, reader) {
	n, d := d.uvarint()
	if n > uint64(len(d.b)) {
		return "", d.fail("a string")
	}
	at := len(d.s) - len(d.b)
	s := d.s[at : at+int(n)]
	d.b = d.b[n:]
	return s, d
}

func (d reader) time() (time.Time, reader) {
	if len(d.b) == 0 {
		return time.Time{}, d.fail("a time")
	}
	flag := d.b[0]
	d.b = d.b[1:]
	switch flag {
	case 0:
		return time.Time{}, d
	case 1:
		var sec int64
		var nsec uint64
		sec, d = d.varint()
		nsec, d = d.uvarint()
		if nsec >= 1e9 {
			return time.Time{}, d.fail("a time")
		}
		return time.Unix(sec, int64(nsec)).UTC(), d
	}
	return time.Time{}, d.fail("a time")
}
