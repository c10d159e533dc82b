package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// The attempt log (Attempts, schema 9): every attempt of a node's log but
// its last, which the node's record keeps. A record is keyed by the
// bucket's sequence (8 bytes, big-endian) and names its node and the
// node's attempt before it, so that each node's records are a chain,
// newest first. A record is binary:
//
//	0x01                      the form
//	uvarint length, node id
//	uvarint the seq of the node's attempt before (0: none)
//	the attempt: At (a flag byte, 0 the zero time, 1 UTC, 2 with a zone
//	offset; varint unix seconds, uvarint nanoseconds, varint offset), Run,
//	Outcome (length-prefixed), uvarint facts + 1 (0: none) and each fact's
//	Rule, uvarint Level, Where, Expected, Actual, then Feedback,
//	ClaimHash, a TryUsed byte and uvarint Repeats
//	crc32c of every byte before it (4 bytes, big-endian)

// Attempt is one attempt of a node's log as its record keeps it: the
// domain's attempt, field for field.
type Attempt struct {
	At           time.Time
	Run, Outcome string
	Facts        []Fact // nil and empty differ
	Feedback     string
	ClaimHash    string
	TryUsed      bool
	Repeats      int
}

// Fact is one fact of an attempt: the domain's gate fact, field for field.
type Fact struct {
	Rule                    string
	Level                   uint64
	Where, Expected, Actual string
}

// AttemptRecord is a decoded attempt record: node's attempt, whose
// previous attempt is the record Prev (0: none).
type AttemptRecord struct {
	Node    string
	Prev    uint64
	Attempt Attempt
}

// ErrAttempt is returned when an attempt record does not decode.
var ErrAttempt = errors.New("malformed attempt record")

// attemptForm is the first byte of an attempt record.
const attemptForm = 0x01

// AppendAttempt appends the record of node's attempt a, whose previous
// attempt is the record prev, to b.
func AppendAttempt(b []byte, node string, prev uint64, a *Attempt) []byte {
	start := len(b)
	b = append(b, attemptForm)
	b = appendString(b, node)
	b = binary.AppendUvarint(b, prev)
	switch {
	case a.At.IsZero():
		b = append(b, 0)
	case zoneOf(a.At) == 0:
		b = appendUnix(append(b, 1), a.At)
	default:
		b = appendUnix(append(b, 2), a.At)
		b = binary.AppendVarint(b, int64(zoneOf(a.At)))
	}
	b = appendString(b, a.Run)
	b = appendString(b, a.Outcome)
	if a.Facts == nil {
		b = append(b, 0)
	} else {
		b = binary.AppendUvarint(b, uint64(len(a.Facts))+1)
		for _, f := range a.Facts {
			b = appendString(b, f.Rule)
			b = binary.AppendUvarint(b, f.Level)
			b = appendString(b, f.Where)
			b = appendString(b, f.Expected)
			b = appendString(b, f.Actual)
		}
	}
	b = appendString(b, a.Feedback)
	b = appendString(b, a.ClaimHash)
	if a.TryUsed {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(a.Repeats))
	return seal(b, start)
}

// DecodeAttempt decodes the attempt record v, checking its form and
// checksum.
func DecodeAttempt(v []byte) (AttemptRecord, error) {
	var r AttemptRecord
	if len(v) < 1+4 || v[0] != attemptForm {
		return r, fmt.Errorf("%w: form", ErrAttempt)
	}
	body, ok := unseal(v, 1)
	if !ok {
		return r, fmt.Errorf("%w: checksum", ErrAttempt)
	}
	d := recordReader{b: body[1:]}
	r.Node = d.str()
	r.Prev = d.uvarint()
	a := &r.Attempt
	switch flag := d.byte1(); flag {
	case 0:
	case 1, 2:
		a.At = d.unix()
		if flag == 2 {
			a.At = a.At.In(time.FixedZone("", int(d.varint())))
		}
	default:
		d.fail()
	}
	a.Run, a.Outcome = d.str(), d.str()
	if n := d.uvarint(); n > uint64(len(d.b))+1 {
		d.fail()
	} else if n > 0 {
		a.Facts = make([]Fact, n-1)
		for i := range a.Facts {
			f := &a.Facts[i]
			f.Rule = d.str()
			f.Level = d.uvarint()
			f.Where, f.Expected, f.Actual = d.str(), d.str(), d.str()
		}
	}
	a.Feedback, a.ClaimHash = d.str(), d.str()
	switch t := d.uvarint(); t {
	case 0, 1:
		a.TryUsed = t == 1
	default:
		d.fail()
	}
	a.Repeats = int(d.uvarint())
	if !d.done() {
		return AttemptRecord{}, fmt.Errorf("%w: fields", ErrAttempt)
	}
	return r, nil
}
