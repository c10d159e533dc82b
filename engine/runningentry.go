package engine

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"strconv"
	"time"

	"github.com/questbox/questbox/engine/store"
)

// The running entry's compact form (schema 8).
//
// A dispatch writes one record, its run's running entry (dispatch.go), and
// a tick of a thousand dispatches writes a thousand of them: as the JSON
// of the whole Run (appendRun) each took about 250 bytes, most of what
// the tick committed. The compact form keeps only what its key (quest id
// '/' node id) does not say, in binary:
//
//	0x01                       the form (a JSON entry starts with '{', a
//	                           schema 5 entry, a bare run id, with 'r')
//	uvarint field mask         which fields follow, in the order of the rf* bits
//	the fields present:
//	  rfSeq        uvarint n: the run's id is runID(n) ("r12")
//	  rfID         the run's id, when it is not of that form
//	  rfName       string
//	  rfQuest      string: only when it differs from the key's quest
//	  rfNode       string: only when it differs from the key's node
//	  rfRole, rfProvider  strings
//	  rfAttempt    varint
//	  rfStarted    varint unix seconds, uvarint nanoseconds
//	  rfStartedZone  varint offset east of UTC in seconds (absent: UTC)
//	  rfEnded, rfEndedZone  the same for Ended
//	  rfOutcome, rfExit  strings
//	  rfExitCode, rfTokens, rfBytesIn, rfBytesOut  varints
//	  rfError      string
//	  rfRedacted   (no bytes: the bit is the value)
//	  rfCost       8 bytes, the IEEE 754 bits of the cost in US dollars, little-endian
//	  rfReserved   varint: the tokens the run reserved (budget.go)
//	crc32c of every byte before it (4 bytes, big-endian)
//
// A string is a uvarint length and its bytes. A field at its zero value
// is absent. A run being dispatched has an id, a role, a provider, an
// attempt and a start: about 30 bytes where its JSON took 250.
//
// The checksum lets salvage tell an entry that rotted from a sound one,
// as a JSON entry's syntax did. Every reader takes both forms
// (decodeRunning, scanRunEntry): stores of schema 6 and 7 hold JSON
// entries, read as they are by a read-only open, and the migration to
// schema 8 leaves them so (a run in flight ends into the runs bucket as
// JSON either way). A run that ends or leaves running moves to the runs
// bucket as its JSON record (leaveRunning, endRun): the runs bucket keeps
// one form, which its readers (runs, logs, export, salvage's probes)
// read.
//
// Strings keep their bytes: invalid UTF-8 stays as it is in the entry and
// becomes U+FFFD when the run moves to the runs bucket or crosses a JSON
// boundary, as the JSON entry made it at once.

// runningForm is the first byte of a compact running entry.
const runningForm = 0x01

// The field mask of a compact running entry.
const (
	rfSeq = 1 << iota
	rfID
	rfName
	rfQuest
	rfNode
	rfRole
	rfProvider
	rfAttempt
	rfStarted
	rfStartedZone
	rfEnded
	rfEndedZone
	rfOutcome
	rfExit
	rfExitCode
	rfTokens
	rfBytesIn
	rfBytesOut
	rfError
	rfRedacted
	rfCost
	// rfReserved came after the rest: entries written before it lack it
	// (and read a reservation of 0, which they made).
	rfReserved

	rfAll = rfReserved<<1 - 1
)

// errRunningEntry is returned when a running entry is neither form, or its
// compact form does not decode.
var errRunningEntry = errors.New("running entry does not decode")

// isCompactRunning reports whether v is a compact running entry (by its
// first byte; decodeRunning checks the rest).
func isCompactRunning(v []byte) bool { return len(v) > 0 && v[0] == runningForm }

// appendRunning appends the compact running entry of r, kept under the
// running index's key of quest and node.
func appendRunning(b []byte, quest, node string, r *Run) []byte {
	seq := runNumber(r.ID)
	var id [24]byte
	if seq > 0 && string(strconv.AppendUint(append(id[:0], 'r'), seq, 10)) != r.ID { // runID(seq), not allocated
		seq = 0
	}
	return appendRunningSeq(b, quest, node, r, seq)
}

// appendRunningSeq is appendRunning for r whose id is runID(seq), or, with
// seq 0, one not of that form: a dispatch knows its run's number
// (newRun), which appendRunning would parse back from the id.
func appendRunningSeq(b []byte, quest, node string, r *Run, seq uint64) []byte {
	start := len(b)
	var mask uint64
	switch {
	case seq > 0:
		mask |= rfSeq
	case r.ID != "":
		mask |= rfID
	}
	mask |= strBit(r.Name, rfName) | strBit(r.Role, rfRole) | strBit(r.Provider, rfProvider) |
		strBit(r.Outcome, rfOutcome) | strBit(r.Exit, rfExit) | strBit(r.Error, rfError)
	if r.Quest != quest {
		mask |= rfQuest
	}
	if r.Node != node {
		mask |= rfNode
	}
	mask |= intBit(int64(r.Attempt), rfAttempt) | intBit(int64(r.ExitCode), rfExitCode) |
		intBit(int64(r.Tokens), rfTokens) | intBit(r.BytesIn, rfBytesIn) | intBit(r.BytesOut, rfBytesOut) |
		intBit(int64(r.Reserved), rfReserved)
	mask |= timeBits(r.Started, rfStarted, rfStartedZone) | timeBits(r.Ended, rfEnded, rfEndedZone)
	if r.Redacted {
		mask |= rfRedacted
	}
	if r.CostUSD != 0 {
		mask |= rfCost
	}

	b = append(b, runningForm)
	b = binary.AppendUvarint(b, mask)
	if mask&rfSeq != 0 {
		b = binary.AppendUvarint(b, seq)
	}
	b = appendOptStr(b, mask, rfID, r.ID)
	b = appendOptStr(b, mask, rfName, r.Name)
	b = appendOptStr(b, mask, rfQuest, r.Quest)
	b = appendOptStr(b, mask, rfNode, r.Node)
	b = appendOptStr(b, mask, rfRole, r.Role)
	b = appendOptStr(b, mask, rfProvider, r.Provider)
	b = appendOptInt64(b, mask, rfAttempt, int64(r.Attempt))
	b = appendOptTime(b, mask, rfStarted, rfStartedZone, r.Started)
	b = appendOptTime(b, mask, rfEnded, rfEndedZone, r.Ended)
	b = appendOptStr(b, mask, rfOutcome, r.Outcome)
	b = appendOptStr(b, mask, rfExit, r.Exit)
	b = appendOptInt64(b, mask, rfExitCode, int64(r.ExitCode))
	b = appendOptInt64(b, mask, rfTokens, int64(r.Tokens))
	b = appendOptInt64(b, mask, rfBytesIn, r.BytesIn)
	b = appendOptInt64(b, mask, rfBytesOut, r.BytesOut)
	b = appendOptStr(b, mask, rfError, r.Error)
	if mask&rfCost != 0 {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(r.CostUSD))
	}
	b = appendOptInt64(b, mask, rfReserved, int64(r.Reserved))
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli))
}

func strBit(s string, bit uint64) uint64 {
	if s == "" {
		return 0
	}
	return bit
}

func intBit(v int64, bit uint64) uint64 {
	if v == 0 {
		return 0
	}
	return bit
}

// timeBits are the bits of t: none for the zero time, zone besides set
// for a time whose offset from UTC is not 0 (JSON keeps that offset too).
func timeBits(t time.Time, set, zone uint64) uint64 {
	if t.IsZero() {
		return 0
	}
	if _, off := t.Zone(); off != 0 {
		return set | zone
	}
	return set
}

func appendOptStr(b []byte, mask, bit uint64, s string) []byte {
	if mask&bit == 0 {
		return b
	}
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendOptInt64(b []byte, mask, bit uint64, v int64) []byte {
	if mask&bit == 0 {
		return b
	}
	return binary.AppendVarint(b, v)
}

func appendOptTime(b []byte, mask, set, zone uint64, t time.Time) []byte {
	if mask&set == 0 {
		return b
	}
	b = binary.AppendVarint(b, t.Unix())
	b = binary.AppendUvarint(b, uint64(t.Nanosecond()))
	if mask&zone != 0 {
		_, off := t.Zone()
		b = binary.AppendVarint(b, int64(off))
	}
	return b
}

// decodeRunning decodes the running entry v kept under key k (quest id
// '/' node id) into r, in either form: compact (appendRunning) or the
// JSON of the run (schemas 6 and 7, appendRun).
func decodeRunning(k, v []byte, r *Run) error {
	if !isCompactRunning(v) {
		*r = Run{}
		if err := json.Unmarshal(v, r); err != nil {
			return fmt.Errorf("%w: %w", errRunningEntry, err)
		}
		return nil
	}
	quest, node, _ := splitRunningKey(k)
	return decodeCompactRunning(v, quest, node, r)
}

// decodeCompactRunning decodes the compact entry v into r; quest and node
// are those its key names.
func decodeCompactRunning(v []byte, quest, node string, r *Run) error {
	if len(v) < 1+1+4 || v[0] != runningForm {
		return errRunningEntry
	}
	body := v[:len(v)-4]
	if crc32.Checksum(body, castagnoli) != binary.BigEndian.Uint32(v[len(v)-4:]) {
		return fmt.Errorf("%w: checksum", errRunningEntry)
	}
	d := runningDecoder{b: body[1:]}
	mask := d.uvarint()
	if mask&^uint64(rfAll) != 0 || mask&rfSeq != 0 && mask&rfID != 0 {
		return fmt.Errorf("%w: field mask %#x", errRunningEntry, mask)
	}
	*r = Run{Quest: quest, Node: node}
	if mask&rfSeq != 0 {
		n := d.uvarint()
		if n == 0 {
			d.fail()
		}
		r.ID = runID(n)
	}
	d.str(mask, rfID, &r.ID)
	d.str(mask, rfName, &r.Name)
	d.str(mask, rfQuest, &r.Quest)
	d.str(mask, rfNode, &r.Node)
	d.str(mask, rfRole, &r.Role)
	d.str(mask, rfProvider, &r.Provider)
	r.Attempt = int(d.optVarint(mask, rfAttempt))
	r.Started = d.time(mask, rfStarted, rfStartedZone)
	r.Ended = d.time(mask, rfEnded, rfEndedZone)
	d.str(mask, rfOutcome, &r.Outcome)
	d.str(mask, rfExit, &r.Exit)
	r.ExitCode = int(d.optVarint(mask, rfExitCode))
	r.Tokens = int(d.optVarint(mask, rfTokens))
	r.BytesIn = d.optVarint(mask, rfBytesIn)
	r.BytesOut = d.optVarint(mask, rfBytesOut)
	d.str(mask, rfError, &r.Error)
	r.Redacted = mask&rfRedacted != 0
	if mask&rfCost != 0 {
		r.CostUSD = math.Float64frombits(d.fixed64())
	}
	r.Reserved = int(d.optVarint(mask, rfReserved))
	if d.bad || len(d.b) != 0 {
		return fmt.Errorf("%w: %d bytes left or cut short", errRunningEntry, len(d.b))
	}
	return nil
}

// scanCompactRunning reads what runEntry needs of a compact entry: its
// run's id, role, provider and reservation.
func scanCompactRunning(v []byte) (runEntry, bool) {
	var r Run
	if err := decodeCompactRunning(v, "", "", &r); err != nil {
		return runEntry{}, false
	}
	return runEntry{ID: r.ID, Role: r.Role, Provider: r.Provider, Reserved: r.Reserved}, true
}

// runningDecoder reads the fields of a compact running entry; bad is set
// by the first that does not decode, and every read after it gives zero.
type runningDecoder struct {
	b   []byte
	bad bool
}

func (d *runningDecoder) fail() { d.bad, d.b = true, nil }

func (d *runningDecoder) uvarint() uint64 {
	v, ok := store.Uvarint(&d.b)
	if !ok {
		d.fail()
	}
	return v
}

func (d *runningDecoder) varint() int64 {
	v, ok := store.Varint(&d.b)
	if !ok {
		d.fail()
	}
	return v
}

func (d *runningDecoder) optVarint(mask, bit uint64) int64 {
	if mask&bit == 0 {
		return 0
	}
	v := d.varint()
	if v == 0 {
		d.fail() // a zero is written as an absent field
	}
	return v
}

func (d *runningDecoder) str(mask, bit uint64, s *string) {
	if mask&bit == 0 {
		return
	}
	v, ok := store.Prefixed(&d.b)
	if !ok {
		d.fail()
		return
	}
	*s = string(v)
}

func (d *runningDecoder) time(mask, set, zone uint64) time.Time {
	if mask&set == 0 {
		if mask&zone != 0 {
			d.fail()
		}
		return time.Time{}
	}
	sec := d.varint()
	nsec := d.uvarint()
	if nsec > 999_999_999 {
		d.fail()
		return time.Time{}
	}
	t := time.Unix(sec, int64(nsec)).UTC()
	if mask&zone != 0 {
		off := d.varint()
		if off == 0 {
			d.fail()
		}
		t = t.In(time.FixedZone("", int(off)))
	}
	return t
}

// fixed64 reads 8 little-endian bytes.
func (d *runningDecoder) fixed64() uint64 {
	if len(d.b) < 8 {
		d.fail()
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}
