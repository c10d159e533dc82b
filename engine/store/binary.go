package store

import (
	"encoding/binary"
	"hash/crc32"
	"math"
	"time"
)

// The writers and the reader every hand-written binary record shares (the
// running entries, running.go; the event groups, eventgroup.go; the
// attempt log, attemptlog.go; the quest codec's fields, codec.go): a
// string is a uvarint length and its bytes, a number a varint, a time its
// unix seconds (varint) and nanoseconds (uvarint), with, where a record
// keeps it, its offset east of UTC in seconds (varint). A record that
// must tell rot from a sound record ends with the crc32c of every byte
// before it (seal), 4 bytes big-endian.

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// appendString appends s, length first.
func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendUnix appends t's unix seconds and nanoseconds.
func appendUnix(b []byte, t time.Time) []byte {
	b = binary.AppendVarint(b, t.Unix())
	return binary.AppendUvarint(b, uint64(t.Nanosecond()))
}

// zoneOf is t's offset east of UTC in seconds.
func zoneOf(t time.Time) int {
	_, off := t.Zone()
	return off
}

// seal appends the checksum of b[start:], the record that starts at start.
func seal(b []byte, start int) []byte {
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli))
}

// unseal is the record v without its checksum, false when the checksum
// does not hold or v is shorter than min bytes and the checksum.
func unseal(v []byte, min int) ([]byte, bool) {
	if len(v) < min+4 {
		return nil, false
	}
	body := v[:len(v)-4]
	return body, crc32.Checksum(body, castagnoli) == binary.BigEndian.Uint32(v[len(v)-4:])
}

// recordReader reads the fields of a sealed record's body; bad is set by
// the first that does not decode, and every read after it gives zero.
type recordReader struct {
	b   []byte
	bad bool
}

func (d *recordReader) fail() { d.bad, d.b = true, nil }

// done reports whether every read decoded and nothing is left.
func (d *recordReader) done() bool { return !d.bad && len(d.b) == 0 }

func (d *recordReader) uvarint() uint64 {
	v, ok := Uvarint(&d.b)
	if !ok {
		d.fail()
	}
	return v
}

func (d *recordReader) varint() int64 {
	v, ok := Varint(&d.b)
	if !ok {
		d.fail()
	}
	return v
}

// byte1 reads one byte.
func (d *recordReader) byte1() byte {
	if len(d.b) == 0 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

// bytes reads a length-prefixed run of bytes, which shares the record's
// array.
func (d *recordReader) bytes() []byte {
	v, ok := Prefixed(&d.b)
	if !ok {
		d.fail()
	}
	return v
}

// str reads a string, a copy of the record's bytes.
func (d *recordReader) str() string { return string(d.bytes()) }

// unix reads a time appendUnix wrote, in UTC.
func (d *recordReader) unix() time.Time {
	sec := d.varint()
	nsec := d.uvarint()
	if nsec > 999_999_999 {
		d.fail()
		return time.Time{}
	}
	return time.Unix(sec, int64(nsec)).UTC()
}

// zoned is t in the zone offset seconds east of UTC, which a record
// writes only when it is not 0.
func (d *recordReader) zoned(t time.Time) time.Time {
	off := d.varint()
	if off == 0 {
		d.fail()
	}
	return t.In(time.FixedZone("", int(off)))
}

// float64le reads 8 little-endian bytes, the IEEE 754 bits of a float.
func (d *recordReader) float64le() float64 {
	if len(d.b) < 8 {
		d.fail()
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return math.Float64frombits(v)
}
