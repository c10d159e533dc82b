package engine

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"time"

	"github.com/questbox/questbox/engine/store"
)

// The outbox's records (schema 8).
//
// A write transaction's events are one record of the events bucket, a
// group, keyed by its first event's seq: a tick that dispatches a
// thousand nodes writes one record for its thousand events instead of a
// thousand, each with its key, its leaf element and its copy of the time.
// The writes a group commit runs in one transaction share one group
// (sharedGroup, event.go): a commit of 250 results writes one record.
// Every event keeps its own Seq: seqs are still taken one by one from
// the bucket's sequence, so nothing outside the engine sees the
// difference. Stores written before schema 8 hold one JSON record per
// event (appendEvent), keyed by its seq; readers take both forms, and an
// old record is never rewritten.
//
// A group is binary:
//
//	0x01                      the form (a JSON record starts with '{')
//	uvarint first seq         the record's key says it too
//	varint unix seconds, uvarint nanoseconds: the time of every event
//	per event:
//	  uvarint seq - previous seq (0 for the first)
//	  uvarint field mask, then each field present, in eventFields order
//	crc32c of every byte before it (4 bytes, big-endian)
//
// The checksum lets verify and salvage tell a group from bytes of some
// other record, as a JSON record's shape did. The outbox bound may rewrite
// a group without its dropped events (trimOutbox), so the seqs inside a
// group may have gaps, which is why each event says its own.
//
// Readers start at the record that holds the first seq they want: the one
// Seek finds, or the group before it (eventsAfter). Retention prunes a
// group whole, once its newest event is past the window (pruneRetention),
// so the outbox keeps at least EventRetention events and at most one
// group's worth more (groupEvents).

// groupForm is the first byte of a group record.
const groupForm = 0x01

// groupEvents bounds the events of one group record: a transaction with
// more writes several, each keyed by its first seq. It is the granularity
// of retention (see above) and bounds what a reader decodes to find one
// event.
const groupEvents = 1024

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// eventString is string field i of ev, in the order of their bits in the
// field mask; after them come facts, counters and the device (bitFacts...).
// A switch, not a table of functions: an event passed through a function
// value escapes to the heap, one allocation per event of a tick.
// TestEveryEventFieldIsInAGroup fails until a new Event field is written
// here too.
func eventString(ev *Event, i int) *string {
	switch i {
	case 0:
		return &ev.Kind
	case 1:
		return &ev.Quest
	case 2:
		return &ev.Node
	case 3:
		return &ev.Role
	case 4:
		return &ev.Team
	case 5:
		return &ev.Stage
	case 6:
		return &ev.Phase
	case 7:
		return &ev.From
	case 8:
		return &ev.To
	case 9:
		return &ev.Outcome
	case 10:
		return &ev.Feedback
	case 11:
		return &ev.RootCause
	case 12:
		return &ev.ClaimHash
	case 13:
		return &ev.Reason
	case 14:
		return &ev.Detail
	}
	panic(fmt.Sprintf("BUG: event string field %d", i))
}

// eventStringsOf is ev's string fields in eventString's order, read in
// one go: an encoder (appendGroupEvent) reads each twice, and a tick
// encodes a thousand events.
func eventStringsOf(ev *Event) [eventStrings]string {
	return [eventStrings]string{ev.Kind, ev.Quest, ev.Node, ev.Role, ev.Team, ev.Stage, ev.Phase,
		ev.From, ev.To, ev.Outcome, ev.Feedback, ev.RootCause, ev.ClaimHash, ev.Reason, ev.Detail}
}

// eventStrings is how many string fields eventString has.
const eventStrings = 15

// The mask bits of the fields that are not strings.
const (
	bitFacts    = 1 << eventStrings
	bitCounters = bitFacts << 1
	bitDevice   = bitCounters << 1
	knownBits   = bitDevice<<1 - 1
)

// errGroup is returned when a group record does not decode.
var errGroup = errors.New("damaged event group")

// isGroup reports whether v, a record of the events bucket, is a group.
func isGroup(v []byte) bool { return len(v) > 0 && v[0] == groupForm }

// appendGroupHead starts a group whose first event is seq, at time at.
func appendGroupHead(b []byte, seq uint64, at time.Time) []byte {
	b = append(b, groupForm)
	b = binary.AppendUvarint(b, seq)
	b = binary.AppendVarint(b, at.Unix())
	return binary.AppendUvarint(b, uint64(at.Nanosecond()))
}

// appendGroupEvent appends ev, whose seq follows prev (the group's first
// seq for its first event), to a group; Seq and Time are the group's.
func appendGroupEvent(b []byte, prev uint64, ev *Event) ([]byte, error) {
	if ev.Seq < prev {
		return nil, fmt.Errorf("BUG: event %d after %d in a group", ev.Seq, prev)
	}
	b = binary.AppendUvarint(b, ev.Seq-prev)
	strs := eventStringsOf(ev)
	var mask uint64
	for i, s := range strs {
		if s != "" {
			mask |= 1 << i
		}
	}
	if len(ev.Facts) > 0 {
		mask |= bitFacts
	}
	if ev.Counters != nil {
		mask |= bitCounters
	}
	if ev.Device != nil {
		mask |= bitDevice
	}
	b = binary.AppendUvarint(b, mask)
	for i, s := range strs {
		if mask&(1<<i) != 0 {
			b = binary.AppendUvarint(b, uint64(len(s)))
			b = append(b, s...)
		}
	}
	if mask&bitFacts != 0 {
		// Facts are rare (verdicts) and nested: their JSON, as the
		// single-event record has it.
		at := len(b)
		b = append(b, 0, 0, 0, 0, 0) // room for the length, moved below
		var err error
		if b, err = appendFacts(b, ev.Facts); err != nil {
			return nil, err
		}
		b = putLength(b, at)
	}
	if c := ev.Counters; c != nil {
		b = binary.AppendVarint(b, int64(c.AgentRuns))
		b = binary.AppendVarint(b, int64(c.Tokens))
		b = binary.AppendVarint(b, int64(c.WallUsed))
	}
	if d := ev.Device; d != nil {
		at := len(b)
		b = append(b, 0, 0, 0, 0, 0)
		b = putLength(putDevice(b, d), at)
	}
	return b, nil
}

// putLength writes, at at (where five bytes were kept), the uvarint length
// of what follows those five bytes, and closes the gap.
func putLength(b []byte, at int) []byte {
	n := len(b) - at - 5
	var l [binary.MaxVarintLen64]byte
	w := binary.PutUvarint(l[:], uint64(n))
	copy(b[at:], l[:w])
	copy(b[at+w:], b[at+5:])
	return b[:len(b)-(5-w)]
}

// putDevice appends the JSON of d, as the single-event record (appendEvent)
// and a group record have it.
func putDevice(b []byte, d *DeviceEvent) []byte {
	b = append(b, `{"what":`...)
	b = store.AppendJSONString(b, d.What)
	b = store.AppendOptString(b, `,"press":`, d.Press)
	b = store.AppendOptString(b, `,"result":`, d.Result)
	b = store.AppendOptString(b, `,"target":`, d.Target)
	b = store.AppendOptString(b, `,"broker":`, d.Broker)
	b = store.AppendOptString(b, `,"error":`, d.Error)
	if d.Fault {
		b = append(b, `,"fault":true`...)
	}
	return append(b, '}')
}

// appendGroupEnd seals a group with its checksum.
func appendGroupEnd(b []byte) []byte {
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// encodeGroup is the group record of evs (at least one, in seq order, all
// of the same time).
func encodeGroup(evs []Event) ([]byte, error) {
	b := appendGroupHead(nil, evs[0].Seq, evs[0].Time)
	prev := evs[0].Seq
	for i := range evs {
		var err error
		if b, err = appendGroupEvent(b, prev, &evs[i]); err != nil {
			return nil, err
		}
		prev = evs[i].Seq
	}
	return appendGroupEnd(b), nil
}

// groupReader walks the events of a group record.
type groupReader struct {
	b    []byte // what is left to read, before the checksum
	seq  uint64 // the seq of the event last read (the first seq before any)
	at   time.Time
	read bool // an event was read
}

// openGroup checks a group record of key k and returns its reader.
func openGroup(k, v []byte) (groupReader, error) {
	if !isGroup(v) || len(v) < 1+4 {
		return groupReader{}, errGroup
	}
	body, sum := v[:len(v)-4], binary.BigEndian.Uint32(v[len(v)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return groupReader{}, fmt.Errorf("%w: checksum", errGroup)
	}
	r := groupReader{b: body[1:]}
	first, ok := r.uvarint()
	sec, ok2 := r.varint()
	nsec, ok3 := r.uvarint()
	if !ok || !ok2 || !ok3 || nsec >= 1e9 {
		return groupReader{}, fmt.Errorf("%w: head", errGroup)
	}
	if len(k) != 8 || seqOf(k) != first {
		return groupReader{}, fmt.Errorf("%w: keyed %s, first seq %d", errGroup, store.ShowKey(k), first)
	}
	r.seq, r.at = first, time.Unix(sec, int64(nsec)).UTC()
	if len(r.b) == 0 {
		return groupReader{}, fmt.Errorf("%w: no event", errGroup)
	}
	return r, nil
}

// groupKey is the first seq a group record says it holds, if its checksum
// holds: the key it belongs under.
func groupKey(v []byte) (uint64, bool) {
	if !isGroup(v) || len(v) < 1+4 {
		return 0, false
	}
	if crc32.Checksum(v[:len(v)-4], castagnoli) != binary.BigEndian.Uint32(v[len(v)-4:]) {
		return 0, false
	}
	first, n := binary.Uvarint(v[1 : len(v)-4])
	return first, n > 0
}

func (r *groupReader) uvarint() (uint64, bool) { return store.Uvarint(&r.b) }
func (r *groupReader) varint() (int64, bool)   { return store.Varint(&r.b) }
func (r *groupReader) bytes() ([]byte, bool)   { return store.Prefixed(&r.b) }

// next reads the next event into ev, decoding its fields only when its
// seq is past since (otherwise only ev.Seq is set). It returns false at
// the end of the group.
func (r *groupReader) next(ev *Event, since uint64) (bool, error) {
	if len(r.b) == 0 {
		return false, nil
	}
	d, ok := r.uvarint()
	if !ok || (r.read && d == 0) || (!r.read && d != 0) {
		return false, fmt.Errorf("%w: seq after %d", errGroup, r.seq)
	}
	r.seq += d
	r.read = true
	mask, ok := r.uvarint()
	if !ok || mask&^knownBits != 0 {
		return false, fmt.Errorf("%w: event %d: field mask", errGroup, r.seq)
	}
	full := r.seq > since
	if full {
		*ev = Event{Seq: r.seq, Time: r.at}
	} else {
		ev.Seq = r.seq
	}
	bad := func(what string) error { return fmt.Errorf("%w: event %d: %s", errGroup, r.seq, what) }
	for i := range eventStrings {
		if mask&(1<<i) == 0 {
			continue
		}
		s, ok := r.bytes()
		if !ok {
			return false, bad("string field")
		}
		if full {
			*eventString(ev, i) = string(s)
		}
	}
	if mask&bitFacts != 0 {
		s, ok := r.bytes()
		if !ok {
			return false, bad("facts")
		}
		if full {
			if err := json.Unmarshal(s, &ev.Facts); err != nil {
				return false, bad("facts: " + err.Error())
			}
		}
	}
	if mask&bitCounters != 0 {
		a, ok1 := r.varint()
		t, ok2 := r.varint()
		w, ok3 := r.varint()
		if !ok1 || !ok2 || !ok3 {
			return false, bad("counters")
		}
		if full {
			ev.Counters = &Counters{AgentRuns: int(a), Tokens: int(t), WallUsed: time.Duration(w)}
		}
	}
	if mask&bitDevice != 0 {
		s, ok := r.bytes()
		if !ok {
			return false, bad("device")
		}
		if full {
			ev.Device = new(DeviceEvent)
			if err := json.Unmarshal(s, ev.Device); err != nil {
				return false, bad("device: " + err.Error())
			}
		}
	}
	return true, nil
}

// eachEvent calls fn with the events of the record k, v of the events
// bucket, in either form, oldest first, skipping those with Seq <= since
// without decoding them; fn returns false to stop. It returns false when
// fn did.
func eachEvent(k, v []byte, since uint64, fn func(ev *Event) bool) (bool, error) {
	if !isGroup(v) {
		if seqOf(k) <= since {
			return true, nil
		}
		var ev Event
		if err := json.Unmarshal(v, &ev); err != nil {
			return false, fmt.Errorf("decode event %d: %w", seqOf(k), err)
		}
		return fn(&ev), nil
	}
	r, err := openGroup(k, v)
	if err != nil {
		return false, fmt.Errorf("decode events from %d: %w", seqOf(k), err)
	}
	var ev Event
	for {
		more, err := r.next(&ev, since)
		switch {
		case err != nil:
			return false, fmt.Errorf("decode events from %d: %w", seqOf(k), err)
		case !more:
			return true, nil
		case ev.Seq <= since:
			continue
		}
		if !fn(&ev) {
			return false, nil
		}
	}
}

// checkGroup decodes every event of a group record: nil when it is sound.
func checkGroup(k, v []byte) error {
	_, err := eachEvent(k, v, 0, func(*Event) bool { return true })
	return err
}

// lastSeqIn is the seq of the newest event of the record k, v.
func lastSeqIn(k, v []byte) (uint64, error) {
	if !isGroup(v) {
		return seqOf(k), nil
	}
	r, err := openGroup(k, v)
	if err != nil {
		return 0, err
	}
	var ev Event
	for {
		more, err := r.next(&ev, math.MaxUint64)
		if err != nil {
			return 0, err
		}
		if !more {
			return r.seq, nil
		}
	}
}

// holdsPast reports whether the events record k, v holds an event whose
// seq is past limit: a single record's is its key; a group is read (its
// checksum checked, its events skipped, not decoded) only up to its first
// event past limit, as its seqs rise. Retention asks it of the record that
// straddles its window each time it runs, so it stops there rather than
// reading the whole group as lastSeqIn does.
func holdsPast(k, v []byte, limit uint64) (bool, error) {
	if !isGroup(v) {
		return seqOf(k) > limit, nil
	}
	r, err := openGroup(k, v)
	if err != nil {
		return false, err
	}
	var ev Event
	for {
		more, err := r.next(&ev, math.MaxUint64)
		if err != nil || !more {
			return false, err
		}
		if r.seq > limit {
			return true, nil
		}
	}
}

// eventCursor is what eventsAfter walks: a bbolt cursor of the events
// bucket.
type eventCursor interface {
	Seek(seek []byte) (key []byte, value []byte)
	Next() (key []byte, value []byte)
	Prev() (key []byte, value []byte)
	Last() (key []byte, value []byte)
}

// eventsAfter calls fn with every event with Seq > since, oldest first,
// until fn returns false. The seqs it gives only rise: were two records
// ever to overlap (a salvage that found an older copy of a group the
// outbox bound had rewritten under a later key), no event is given twice.
func eventsAfter(c eventCursor, since uint64, fn func(ev *Event) bool) error {
	last := since
	give := func(ev *Event) bool {
		last = ev.Seq
		return fn(ev)
	}
	for k, v := seekEvents(c, since); k != nil; k, v = c.Next() {
		more, err := eachEvent(k, v, last, give)
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// seekEvents moves c to the record that holds since+1, or the first one
// after it: the record Seek finds at since+1, or else the group before
// it, which may hold events up to any seq below the next record's.
func seekEvents(c eventCursor, since uint64) (k, v []byte) {
	k, v = c.Seek(u64(since + 1))
	if k != nil && seqOf(k) == since+1 {
		return k, v
	}
	var pk, pv []byte
	if k == nil {
		pk, pv = c.Last()
	} else {
		pk, pv = c.Prev()
	}
	if pk != nil && isGroup(pv) {
		return pk, pv
	}
	return c.Seek(u64(since + 1)) // back where it was
}
