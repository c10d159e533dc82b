package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// The running index (Running): quest id '/' node id -> the run in flight
// for that node.
//
// A dispatch writes one record, its run's running entry, and a tick of a
// thousand dispatches writes a thousand of them: as the JSON of the whole
// run each took about 250 bytes, most of what the tick committed. The
// compact form (schema 8) keeps only what its key does not say, in
// binary:
//
//	0x01                       the form (a JSON entry starts with '{', a
//	                           schema 5 entry, a bare run id, with 'r')
//	uvarint field mask         which fields follow, in the order of the rf* bits
//	the fields present:
//	  rfSeq        uvarint n: the run's id is RunID(n) ("r12")
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
//	  rfReserved   varint: the tokens the run reserved
//	crc32c of every byte before it (4 bytes, big-endian)
//
// A string is a uvarint length and its bytes. A field at its zero value
// is absent. A run being dispatched has an id, a role, a provider, an
// attempt and a start: about 30 bytes where its JSON took 250.
//
// The checksum lets salvage tell an entry that rotted from a sound one,
// as a JSON entry's syntax did. Stores of schema 6 and 7 hold JSON
// entries (the domain's JSON of its run), read as they are by a
// read-only open, and the migration to schema 8 leaves them so: every
// reader takes both forms (IsCompactRunning tells them apart).
//
// Strings keep their bytes: invalid UTF-8 stays as it is in the entry and
// becomes U+FFFD when the run crosses a JSON boundary, as the JSON entry
// made it at once.

// RunningEntry is a run in flight as its compact running entry keeps it:
// the domain's run, field for field.
type RunningEntry struct {
	ID, Name, Quest, Node, Role, Provider string
	Attempt                               int
	Started, Ended                        time.Time
	Outcome, Exit                         string
	ExitCode, Tokens                      int
	BytesIn, BytesOut                     int64
	Error                                 string
	Redacted                              bool
	CostUSD                               float64
	Reserved                              int
}

// ErrRunningEntry is returned when a running entry is neither form, or its
// compact form does not decode.
var ErrRunningEntry = errors.New("running entry does not decode")

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

// RunID is the id of run number n ("r12"), the form a compact entry
// keeps as its number.
func RunID(n uint64) string {
	var b [24]byte
	return string(strconv.AppendUint(append(b[:0], 'r'), n, 10))
}

// RunningKey is the running index's key of node of quest: the quest's id,
// '/', the node's. '/' sorts before every digit, so a quest's entries come
// before those of every quest whose id it is a prefix of ("q1/…" before
// "q10"), in the active index's order.
func RunningKey(quest, node string) []byte {
	return AppendRunningKey(make([]byte, 0, len(quest)+1+len(node)), quest, node)
}

// AppendRunningKey appends the running index's key of quest's node.
func AppendRunningKey(b []byte, quest, node string) []byte {
	b = append(b, quest...)
	b = append(b, '/')
	return append(b, node...)
}

// RunningPrefix is the prefix of quest's running entries.
func RunningPrefix(quest string) []byte { return append([]byte(quest), '/') }

// SplitRunningKey is the quest and node of a running entry's key; ok is
// false for a key of another form (a schema 5 entry is keyed by the node
// id alone).
func SplitRunningKey(k []byte) (quest, node string, ok bool) {
	i := bytes.IndexByte(k, '/')
	if i <= 0 || i == len(k)-1 {
		return "", "", false
	}
	return string(k[:i]), string(k[i+1:]), true
}

// IsCompactRunning reports whether v is a compact running entry (by its
// first byte; DecodeRunning checks the rest).
func IsCompactRunning(v []byte) bool { return len(v) > 0 && v[0] == runningForm }

// AppendRunning appends the compact running entry of r, kept under the
// running index's key of quest and node. seq is r's number when its id is
// RunID(seq) (a dispatch knows it), else 0: then an id of that form is
// found by parsing it.
func AppendRunning(b []byte, quest, node string, r *RunningEntry, seq uint64) []byte {
	if seq == 0 && len(r.ID) > 1 && r.ID[0] == 'r' {
		n, err := strconv.ParseUint(r.ID[1:], 10, 64)
		var id [24]byte
		if err == nil && n > 0 && string(strconv.AppendUint(append(id[:0], 'r'), n, 10)) == r.ID { // RunID(n), not allocated
			seq = n
		}
	}
	start := len(b)
	mask := runningMask(quest, node, r, seq)
	b = append(b, runningForm)
	b = binary.AppendUvarint(b, mask)
	if mask&rfSeq != 0 {
		b = binary.AppendUvarint(b, seq)
	}
	b = optString(b, mask, rfID, r.ID)
	b = optString(b, mask, rfName, r.Name)
	b = optString(b, mask, rfQuest, r.Quest)
	b = optString(b, mask, rfNode, r.Node)
	b = optString(b, mask, rfRole, r.Role)
	b = optString(b, mask, rfProvider, r.Provider)
	b = optVarint(b, mask, rfAttempt, int64(r.Attempt))
	b = optTime(b, mask, rfStarted, rfStartedZone, r.Started)
	b = optTime(b, mask, rfEnded, rfEndedZone, r.Ended)
	b = optString(b, mask, rfOutcome, r.Outcome)
	b = optString(b, mask, rfExit, r.Exit)
	b = optVarint(b, mask, rfExitCode, int64(r.ExitCode))
	b = optVarint(b, mask, rfTokens, int64(r.Tokens))
	b = optVarint(b, mask, rfBytesIn, r.BytesIn)
	b = optVarint(b, mask, rfBytesOut, r.BytesOut)
	b = optString(b, mask, rfError, r.Error)
	if mask&rfCost != 0 {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(r.CostUSD))
	}
	b = optVarint(b, mask, rfReserved, int64(r.Reserved))
	return seal(b, start)
}

// runningMask is the field mask of r's compact entry.
func runningMask(quest, node string, r *RunningEntry, seq uint64) uint64 {
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
	return mask
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
	if zoneOf(t) != 0 {
		return set | zone
	}
	return set
}

func optString(b []byte, mask, bit uint64, s string) []byte {
	if mask&bit == 0 {
		return b
	}
	return appendString(b, s)
}

func optVarint(b []byte, mask, bit uint64, v int64) []byte {
	if mask&bit == 0 {
		return b
	}
	return binary.AppendVarint(b, v)
}

func optTime(b []byte, mask, set, zone uint64, t time.Time) []byte {
	if mask&set == 0 {
		return b
	}
	b = appendUnix(b, t)
	if mask&zone != 0 {
		b = binary.AppendVarint(b, int64(zoneOf(t)))
	}
	return b
}

// DecodeRunning decodes the compact entry v into r; quest and node are
// those its key names (SplitRunningKey).
func DecodeRunning(v []byte, quest, node string, r *RunningEntry) error {
	if len(v) < 1+1+4 || v[0] != runningForm {
		return ErrRunningEntry
	}
	body, ok := unseal(v, 1+1)
	if !ok {
		return fmt.Errorf("%w: checksum", ErrRunningEntry)
	}
	d := recordReader{b: body[1:]}
	mask := d.uvarint()
	if mask&^uint64(rfAll) != 0 || mask&rfSeq != 0 && mask&rfID != 0 {
		return fmt.Errorf("%w: field mask %#x", ErrRunningEntry, mask)
	}
	*r = RunningEntry{Quest: quest, Node: node}
	if mask&rfSeq != 0 {
		n := d.uvarint()
		if n == 0 {
			d.fail()
		}
		r.ID = RunID(n)
	}
	d.optStr(mask, rfID, &r.ID)
	d.optStr(mask, rfName, &r.Name)
	d.optStr(mask, rfQuest, &r.Quest)
	d.optStr(mask, rfNode, &r.Node)
	d.optStr(mask, rfRole, &r.Role)
	d.optStr(mask, rfProvider, &r.Provider)
	r.Attempt = int(d.optVarint(mask, rfAttempt))
	r.Started = d.optTime(mask, rfStarted, rfStartedZone)
	r.Ended = d.optTime(mask, rfEnded, rfEndedZone)
	d.optStr(mask, rfOutcome, &r.Outcome)
	d.optStr(mask, rfExit, &r.Exit)
	r.ExitCode = int(d.optVarint(mask, rfExitCode))
	r.Tokens = int(d.optVarint(mask, rfTokens))
	r.BytesIn = d.optVarint(mask, rfBytesIn)
	r.BytesOut = d.optVarint(mask, rfBytesOut)
	d.optStr(mask, rfError, &r.Error)
	r.Redacted = mask&rfRedacted != 0
	if mask&rfCost != 0 {
		r.CostUSD = d.float64le()
	}
	r.Reserved = int(d.optVarint(mask, rfReserved))
	if !d.done() {
		return fmt.Errorf("%w: %d bytes left or cut short", ErrRunningEntry, len(d.b))
	}
	return nil
}

func (d *recordReader) optVarint(mask, bit uint64) int64 {
	if mask&bit == 0 {
		return 0
	}
	v := d.varint()
	if v == 0 {
		d.fail() // a zero is written as an absent field
	}
	return v
}

func (d *recordReader) optStr(mask, bit uint64, s *string) {
	if mask&bit == 0 {
		return
	}
	v, ok := Prefixed(&d.b)
	if !ok {
		d.fail()
		return
	}
	*s = string(v)
}

func (d *recordReader) optTime(mask, set, zone uint64) time.Time {
	if mask&set == 0 {
		if mask&zone != 0 {
			d.fail()
		}
		return time.Time{}
	}
	t := d.unix()
	if d.bad {
		return time.Time{}
	}
	if mask&zone != 0 {
		t = d.zoned(t)
	}
	return t
}
