package store

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// A Codec is the binary form of a record type R, driven by one table of
// Fields: the table is the form. Encoding appends a version byte, the
// number of fields (uvarint) and then every field in table order;
// decoding reads as many fields as the record says, in the same order,
// and leaves the fields past them zero. So adding a field to R is adding
// its entry at the end of the table: records written before read as they
// were, the new field zero, and no migration rewrites them. (The domain's
// round-trip test checks by reflection that every field of R has an
// entry.) A record cut short is still an error: its count says what it
// must hold. A record with more fields than the table knows was written
// by a newer build, and is an error too.
//
// A legacy form (WithLegacy) is a version byte followed by a fixed number
// of fields and no count: the form before the count was written.
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
	// legacy maps the version byte of a form without a count to the
	// number of fields it holds.
	legacy map[byte]int
}

// Field is one entry of a Codec's table. Make it with Text, Int, Uint,
// Time, Texts, Counts, Tallied or TextMap.
type Field[R any] struct {
	// Name is the field's path in R ("Limits.MaxTries").
	Name string
	enc  func(b []byte, r *R) []byte
	dec  func(d *reader, r *R)
}

// ErrRecord is the cause of a binary record that does not decode.
var ErrRecord = errors.New("malformed record")

// NewCodec returns the codec of the table fields, whose records start
// with the byte version.
func NewCodec[R any](version byte, fields ...Field[R]) *Codec[R] {
	return &Codec[R]{version: version, fields: fields}
}

// WithLegacy makes c read records that start with version and hold the
// first n fields of the table with no count (what an earlier build
// wrote), and returns c.
func (c *Codec[R]) WithLegacy(version byte, n int) *Codec[R] {
	if version == c.version || n > len(c.fields) {
		panic("BUG: store: a legacy form must have its own version byte and no more fields than the table")
	}
	if c.legacy == nil {
		c.legacy = map[byte]int{}
	}
	c.legacy[version] = n
	return c
}

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
	b = binary.AppendUvarint(b, uint64(len(c.fields)))
	for i := range c.fields {
		b = c.fields[i].enc(b, r)
	}
	return b
}

// Decode reads the record raw into r, which it zeroes first. A record of
// another form, cut short or with bytes past its end is ErrRecord.
func (c *Codec[R]) Decode(raw []byte, r *R) error {
	if len(raw) == 0 {
		return fmt.Errorf("%w: empty", ErrRecord)
	}
	n, legacy := c.legacy[raw[0]]
	if !legacy && raw[0] != c.version {
		return fmt.Errorf("%w: unknown form", ErrRecord)
	}
	// One string holds the whole record: every string field is a slice
	// of it, so a decode costs one allocation for all its strings.
	// The reader comes from a pool: passed to the table's functions it
	// would otherwise be allocated for every record.
	d := readers.Get().(*reader)
	*d = reader{b: raw[1:], s: string(raw[1:])}
	if !legacy {
		n = int(min(d.uvarint(), uint64(len(c.fields))+1))
	}
	var zero R
	*r = zero
	if n > len(c.fields) && d.err == nil {
		d.err = fmt.Errorf("%w: it has more fields than this questbox knows (written by a newer one)", ErrRecord)
	}
	for i := range min(n, len(c.fields)) {
		c.fields[i].dec(d, r)
	}
	err := d.err
	if err == nil && len(d.b) > 0 {
		err = fmt.Errorf("%w: %d bytes past its end", ErrRecord, len(d.b))
	}
	*d = reader{}
	readers.Put(d)
	return err
}

var readers = sync.Pool{New: func() any { return new(reader) }}

// Text is a string field.
func Text[R any, S ~string](name string, get func(*R) *S) Field[R] {
	return Field[R]{Name: name,
		enc: func(b []byte, r *R) []byte { return appendString(b, string(*get(r))) },
		dec: func(d *reader, r *R) {
			*get(r) = S(d.string())
		}}
}

// Int is a signed integer field (a time.Duration included).
func Int[R any, I ~int | ~int64](name string, get func(*R) *I) Field[R] {
	return Field[R]{Name: name,
		enc: func(b []byte, r *R) []byte { return binary.AppendVarint(b, int64(*get(r))) },
		dec: func(d *reader, r *R) {
			*get(r) = I(d.varint())
		}}
}

// Uint is an unsigned integer field.
func Uint[R any](name string, get func(*R) *uint64) Field[R] {
	return Field[R]{Name: name,
		enc: func(b []byte, r *R) []byte { return binary.AppendUvarint(b, *get(r)) },
		dec: func(d *reader, r *R) {
			*get(r) = d.uvarint()
		}}
}

// Time is a time field, read back in UTC.
func Time[R any](name string, get func(*R) *time.Time) Field[R] {
	return Field[R]{Name: name,
		enc: func(b []byte, r *R) []byte { return appendTime(b, *get(r)) },
		dec: func(d *reader, r *R) {
			*get(r) = d.time()
		}}
}

// Bool is a boolean field, one byte.
func Bool[R any](name string, get func(*R) *bool) Field[R] {
	return Field[R]{Name: name,
		enc: func(b []byte, r *R) []byte {
			if *get(r) {
				return append(b, 1)
			}
			return append(b, 0)
		},
		dec: func(d *reader, r *R) {
			switch d.uvarint() {
			case 0:
			case 1:
				*get(r) = true
			default:
				if d.err == nil {
					d.err = fmt.Errorf("%w: a boolean that is neither 0 nor 1", ErrRecord)
				}
			}
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
		dec: func(d *reader, r *R) {
			n := d.length()
			if n == 0 || (emptyIsNil && n == 1) {
				*get(r) = nil
				return
			}
			ss := make([]string, 0, n-1)
			for range n - 1 {
				ss = append(ss, d.string())
			}
			*get(r) = ss
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
		dec: func(d *reader, r *R) {
			n := d.length()
			if n == 0 {
				return
			}
			m := make(map[K]int, n-1)
			for range n - 1 {
				s := d.string()
				k := K(s)
				if intern != nil {
					k = intern(s)
				}
				m[k] = int(d.varint())
			}
			*get(r) = m
		}}
}

// A Tally is a record's fixed table of named counts kept in a form of its
// own (not a map), written as Counts writes a map: each slot whose count
// is not zero is an entry, in the order of the names.
type Tally interface {
	// Len is the number of entries, -1 for none at all (a nil map's).
	Len() int
	// Slots is the number of slots, Entry(i) slot i's name and count, in
	// ascending order of name.
	Slots() int
	Entry(i int) (name string, n int)
	// Make makes an empty table (an empty map's); Set sets the count of
	// the slot named name, an error for a name the table does not have.
	Make()
	Set(name string, n int64) error
}

// Tallied is a Tally in the form of Counts: a record written from the map
// reads into the Tally and back byte for byte, as long as the map held
// no zero count (a name the Tally does not have is ErrRecord).
func Tallied[R any](name string, get func(*R) Tally) Field[R] {
	return Field[R]{Name: name,
		enc: func(b []byte, r *R) []byte {
			t := get(r)
			b = binary.AppendUvarint(b, uint64(t.Len()+1))
			for i := range t.Slots() {
				if k, n := t.Entry(i); n != 0 {
					b = appendString(b, k)
					b = binary.AppendVarint(b, int64(n))
				}
			}
			return b
		},
		dec: func(d *reader, r *R) {
			n := d.length()
			if n == 0 {
				return
			}
			t := get(r)
			t.Make()
			for range n - 1 {
				k := d.string()
				if err := t.Set(k, d.varint()); err != nil && d.err == nil {
					d.err = fmt.Errorf("%w: %s: %v", ErrRecord, name, err)
				}
			}
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
		dec: func(d *reader, r *R) {
			n := d.length()
			if n <= 1 {
				return
			}
			m := make(map[string]string, n-1)
			for range n - 1 {
				k := d.string()
				m[k] = d.string()
			}
			*get(r) = m
		}}
}

// appendTime appends a flag byte, 0 for the zero time, else 1 and the
// time (appendUnix), whose zone a quest record does not keep.
func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, 0)
	}
	return appendUnix(append(b, 1), t)
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

func (d *reader) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s cut short", ErrRecord, what)
	}
	d.b = nil
}

func (d *reader) uvarint() uint64 {
	v, ok := Uvarint(&d.b)
	if !ok {
		d.fail("a number")
	}
	return v
}

func (d *reader) varint() int64 {
	v, ok := Varint(&d.b)
	if !ok {
		d.fail("a number")
	}
	return v
}

// length reads a list or map length plus one (0: nil), bounded by what
// is left of the record (each entry takes at least a byte).
func (d *reader) length() int {
	n := d.uvarint()
	if n > uint64(len(d.b))+1 {
		d.fail("a list")
		return 0
	}
	return int(n)
}

func (d *reader) string() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail("a string")
		return ""
	}
	at := len(d.s) - len(d.b)
	s := d.s[at : at+int(n)]
	d.b = d.b[n:]
	return s
}

func (d *reader) time() time.Time {
	if len(d.b) == 0 {
		d.fail("a time")
		return time.Time{}
	}
	flag := d.b[0]
	d.b = d.b[1:]
	switch flag {
	case 0:
		return time.Time{}
	case 1:
		sec := d.varint()
		nsec := d.uvarint()
		if nsec >= 1e9 {
			d.fail("a time")
			return time.Time{}
		}
		return time.Unix(sec, int64(nsec)).UTC()
	}
	d.fail("a time")
	return time.Time{}
}
