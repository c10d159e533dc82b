package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
)

// The outbox's records (Events, schema 8).
//
// A write transaction's events are one record of the events bucket, a
// group, keyed by its first event's seq: a tick that dispatches a
// thousand nodes writes one record for its thousand events instead of a
// thousand, each with its key, its leaf element and its copy of the time.
// Every event keeps its own seq. Stores written before schema 8 hold one
// JSON record per event (the domain's JSON of its event), keyed by its
// seq; readers take both forms (IsGroup tells them apart), and an old
// record is never rewritten.
//
// A group is binary:
//
//	0x01                      the form (a JSON record starts with '{')
//	uvarint first seq         the record's key says it too
//	varint unix seconds, uvarint nanoseconds: the time of every event
//	per event:
//	  uvarint seq - previous seq (0 for the first)
//	  uvarint field mask, then each field present, in this order:
//	    the strings (GroupStrings of them, bits 0 to 14), each a uvarint
//	    length and its bytes;
//	    the facts (bit 15): a uvarint length and their JSON;
//	    the counters (bit 16): three varints;
//	    the device event (bit 17): a uvarint length and its JSON
//	crc32c of every byte before it (4 bytes, big-endian)
//
// The checksum lets verify and salvage tell a group from bytes of some
// other record, as a JSON record's shape did. The outbox bound may rewrite
// a group without its dropped events, so the seqs inside a group may have
// gaps, which is why each event says its own.

// GroupForm is the first byte of a group record.
const GroupForm = 0x01

// GroupStrings is how many string fields an event of a group has; which
// is which is the domain's to say, in an order it keeps.
const GroupStrings = 15

// The mask bits of the fields that are not strings.
const (
	bitFacts    = 1 << GroupStrings
	bitCounters = bitFacts << 1
	bitDevice   = bitCounters << 1
	knownBits   = bitDevice<<1 - 1
)

// ErrGroup is returned when a group record does not decode.
var ErrGroup = errors.New("damaged event group")

// GroupEvent is one event to append to a group (AppendGroupEvent).
type GroupEvent struct {
	Seq     uint64
	Strings [GroupStrings]string // "": absent
	// Facts and Device are the JSON of the event's facts and device
	// event; nil: absent.
	Facts, Device []byte
	// HasCounters says that the event carries Counters.
	HasCounters bool
	Counters    [3]int64
}

// GroupFields is one event read from a group (GroupReader.Next): its
// fields as the record's bytes, valid as long as the record is.
type GroupFields struct {
	Seq     uint64
	Strings [GroupStrings][]byte // nil: absent
	// Facts and Device are the JSON of the event's facts and device
	// event; nil: absent.
	Facts, Device []byte
	HasCounters   bool
	Counters      [3]int64
}

// IsGroup reports whether v, a record of the events bucket, is a group.
func IsGroup(v []byte) bool { return len(v) > 0 && v[0] == GroupForm }

// AppendGroupHead starts a group whose first event is seq, at time at,
// at the start of b (SealGroup seals all of b).
func AppendGroupHead(b []byte, seq uint64, at time.Time) []byte {
	b = append(b, GroupForm)
	b = binary.AppendUvarint(b, seq)
	return appendUnix(b, at)
}

// AppendGroupEvent appends ev, whose seq follows prev (the group's first
// seq for its first event), to a group.
func AppendGroupEvent(b []byte, prev uint64, ev *GroupEvent) ([]byte, error) {
	if ev.Seq < prev {
		return nil, fmt.Errorf("BUG: event %d after %d in a group", ev.Seq, prev)
	}
	b = binary.AppendUvarint(b, ev.Seq-prev)
	var mask uint64
	for i, s := range &ev.Strings {
		if s != "" {
			mask |= 1 << i
		}
	}
	if ev.Facts != nil {
		mask |= bitFacts
	}
	if ev.HasCounters {
		mask |= bitCounters
	}
	if ev.Device != nil {
		mask |= bitDevice
	}
	b = binary.AppendUvarint(b, mask)
	for _, s := range &ev.Strings {
		if s != "" {
			b = appendString(b, s)
		}
	}
	if ev.Facts != nil {
		b = binary.AppendUvarint(b, uint64(len(ev.Facts)))
		b = append(b, ev.Facts...)
	}
	if ev.HasCounters {
		for _, c := range ev.Counters {
			b = binary.AppendVarint(b, c)
		}
	}
	if ev.Device != nil {
		b = binary.AppendUvarint(b, uint64(len(ev.Device)))
		b = append(b, ev.Device...)
	}
	return b, nil
}

// SealGroup seals the group b (AppendGroupHead, then its events) with
// its checksum.
func SealGroup(b []byte) []byte { return seal(b, 0) }

// GroupReader walks the events of a group record.
type GroupReader struct {
	d    recordReader // what is left to read, before the checksum
	seq  uint64       // the seq of the event last read (the first seq before any)
	at   time.Time
	read bool // an event was read
}

// OpenGroup checks a group record of key k and returns its reader.
func OpenGroup(k, v []byte) (GroupReader, error) {
	if !IsGroup(v) {
		return GroupReader{}, ErrGroup
	}
	body, ok := unseal(v, 1)
	if !ok {
		if len(v) < 1+4 {
			return GroupReader{}, ErrGroup
		}
		return GroupReader{}, fmt.Errorf("%w: checksum", ErrGroup)
	}
	r := GroupReader{d: recordReader{b: body[1:]}}
	first := r.d.uvarint()
	sec := r.d.varint()
	nsec := r.d.uvarint()
	if r.d.bad || nsec >= 1e9 {
		return GroupReader{}, fmt.Errorf("%w: head", ErrGroup)
	}
	if len(k) != 8 || SeqOf(k) != first {
		return GroupReader{}, fmt.Errorf("%w: keyed %s, first seq %d", ErrGroup, ShowKey(k), first)
	}
	r.seq, r.at = first, time.Unix(sec, int64(nsec)).UTC()
	if len(r.d.b) == 0 {
		return GroupReader{}, fmt.Errorf("%w: no event", ErrGroup)
	}
	return r, nil
}

// GroupKey is the first seq a group record says it holds, if its checksum
// holds: the key it belongs under.
func GroupKey(v []byte) (uint64, bool) {
	if !IsGroup(v) {
		return 0, false
	}
	body, ok := unseal(v, 1)
	if !ok {
		return 0, false
	}
	first, n := binary.Uvarint(body[1:])
	return first, n > 0
}

// Time is the time of every event of the group.
func (r *GroupReader) Time() time.Time { return r.at }

// Next reads the next event into f, its fields only when its seq is past
// since (otherwise only f.Seq is set, the rest skipped). It returns false
// at the end of the group.
func (r *GroupReader) Next(f *GroupFields, since uint64) (bool, error) {
	if len(r.d.b) == 0 {
		return false, nil
	}
	mask, err := r.nextHead()
	if err != nil {
		return false, err
	}
	full := r.seq > since
	if full {
		*f = GroupFields{Seq: r.seq}
	} else {
		f.Seq = r.seq
	}
	if err := r.readStrings(f, mask, full); err != nil {
		return false, err
	}
	return true, r.readRest(f, mask, full)
}

// nextHead reads an event's seq and its field mask.
func (r *GroupReader) nextHead() (mask uint64, err error) {
	d, ok := Uvarint(&r.d.b)
	if !ok || (r.read && d == 0) || (!r.read && d != 0) {
		return 0, fmt.Errorf("%w: seq after %d", ErrGroup, r.seq)
	}
	r.seq += d
	r.read = true
	mask, ok = Uvarint(&r.d.b)
	if !ok || mask&^knownBits != 0 {
		return 0, fmt.Errorf("%w: event %d: field mask", ErrGroup, r.seq)
	}
	return mask, nil
}

func (r *GroupReader) bad(what string) error {
	return fmt.Errorf("%w: event %d: %s", ErrGroup, r.seq, what)
}

// readStrings reads the event's strings, keeping them when full.
func (r *GroupReader) readStrings(f *GroupFields, mask uint64, full bool) error {
	for i := range GroupStrings {
		if mask&(1<<i) == 0 {
			continue
		}
		s, ok := Prefixed(&r.d.b)
		if !ok {
			return r.bad("string field")
		}
		if full {
			f.Strings[i] = s
		}
	}
	return nil
}

// readRest reads the event's facts, counters and device event, keeping
// them when full.
func (r *GroupReader) readRest(f *GroupFields, mask uint64, full bool) error {
	if mask&bitFacts != 0 {
		s, ok := Prefixed(&r.d.b)
		if !ok {
			return r.bad("facts")
		}
		if full {
			f.Facts = s
		}
	}
	if mask&bitCounters != 0 {
		var c [3]int64
		for i := range c {
			v, ok := Varint(&r.d.b)
			if !ok {
				return r.bad("counters")
			}
			c[i] = v
		}
		if full {
			f.HasCounters, f.Counters = true, c
		}
	}
	if mask&bitDevice != 0 {
		s, ok := Prefixed(&r.d.b)
		if !ok {
			return r.bad("device")
		}
		if full {
			f.Device = s
		}
	}
	return nil
}

// LastSeqIn is the seq of the newest event of the record k, v of the
// events bucket: a single record's is its key.
func LastSeqIn(k, v []byte) (uint64, error) {
	if !IsGroup(v) {
		return SeqOf(k), nil
	}
	r, err := OpenGroup(k, v)
	if err != nil {
		return 0, err
	}
	var f GroupFields
	for {
		more, err := r.Next(&f, math.MaxUint64)
		if err != nil {
			return 0, err
		}
		if !more {
			return r.seq, nil
		}
	}
}

// HoldsPast reports whether the events record k, v holds an event whose
// seq is past limit: a single record's is its key; a group is read (its
// checksum checked, its events skipped, not decoded) only up to its first
// event past limit, as its seqs rise. Retention asks it of the record that
// straddles its window each time it runs, so it stops there rather than
// reading the whole group as LastSeqIn does.
func HoldsPast(k, v []byte, limit uint64) (bool, error) {
	if !IsGroup(v) {
		return SeqOf(k) > limit, nil
	}
	r, err := OpenGroup(k, v)
	if err != nil {
		return false, err
	}
	var f GroupFields
	for {
		more, err := r.Next(&f, math.MaxUint64)
		if err != nil || !more {
			return false, err
		}
		if r.seq > limit {
			return true, nil
		}
	}
}

// SeekEvents moves c, a cursor of the events bucket, to the record that
// holds since+1, or the first one after it: the record Seek finds at
// since+1, or else the group before it, which may hold events up to any
// seq below the next record's.
func SeekEvents(c *Cursor, since uint64) (k, v []byte) {
	k, v = c.Seek(U64(since + 1))
	if k != nil && SeqOf(k) == since+1 {
		return k, v
	}
	var pk, pv []byte
	if k == nil {
		pk, pv = c.Last()
	} else {
		pk, pv = c.Prev()
	}
	if pk != nil && IsGroup(pv) {
		return pk, pv
	}
	return c.Seek(U64(since + 1)) // back where it was
}
