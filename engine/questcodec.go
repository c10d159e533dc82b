package engine

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Quest records are stored in a compact binary form (schema 4). The tick
// reads every active quest and writes every quest it dispatches for, so
// their encoding is the tick's hottest code: the binary form decodes
// several times faster than JSON and is a third of its size (fewer pages
// for a tick and for the hourly wall-clock save to write). Quest records
// are not bound by the verdict ledger (node records are, byte for byte,
// and stay JSON), so changing their form needs no reseal.
//
// A record is the version byte questRecordV1 and then every field of
// Quest in declaration order: strings and lists as a uvarint length and
// their bytes; integers as varints; a time as a flag byte (0: the zero
// time) and then its Unix seconds (varint) and nanoseconds (uvarint), read
// back in UTC; a list or a map as a uvarint of its length plus one (0 for
// nil, so nil and empty stay apart as they do in JSON), map entries sorted
// by key. Records written before schema 4 are JSON, which starts with
// '{': decodeQuest reads both, so a salvaged or read-only older store
// reads as it is.

// questRecordV1 is the first byte of a binary quest record written before
// quests had a project; questRecordV2 of one with Quest.Project after
// every V1 field. Both decode; records are written as V2.
const (
	questRecordV1 = 0x01
	questRecordV2 = 0x02
)

// errQuestRecord is the cause of a quest record that does not decode.
var errQuestRecord = errors.New("malformed quest record")

// encodeQuest returns q's record.
func encodeQuest(q *Quest) []byte { return appendQuest(make([]byte, 0, 256), q) }

// appendQuest appends q's record to b.
func appendQuest(b []byte, q *Quest) []byte {
	b = append(b, questRecordV2)
	b = appendString(b, q.ID)
	b = appendString(b, q.Name)
	b = appendString(b, q.Direction)
	b = appendString(b, string(q.Status))
	b = appendString(b, q.Reason)
	b = appendString(b, q.Mode)
	b = appendStrings(b, q.Roles)
	b = appendString(b, q.Provider)
	b = appendString(b, q.Gate)
	b = appendStrings(b, q.Checkpoints)
	l := q.Limits
	for _, v := range []int64{int64(l.MaxTries), int64(l.MaxAgentRuns), int64(l.WallClock), int64(l.TokenBudget), int64(l.MaxStalled), int64(l.OwnerEvery)} {
		b = binary.AppendVarint(b, v)
	}
	c := q.Counters
	for _, v := range []int64{int64(c.AgentRuns), int64(c.Tokens), int64(c.WallUsed)} {
		b = binary.AppendVarint(b, v)
	}
	if q.Counts == nil {
		b = append(b, 0)
	} else {
		b = binary.AppendUvarint(b, uint64(len(q.Counts))+1)
		var buf [16]Status
		for _, k := range sortedKeys(q.Counts, buf[:0]) {
			b = appendString(b, string(k))
			b = binary.AppendVarint(b, int64(q.Counts[k]))
		}
	}
	b = appendString(b, q.Running)
	if q.Queued == nil {
		b = append(b, 0)
	} else {
		b = binary.AppendUvarint(b, uint64(len(q.Queued))+1)
		var buf [8]string
		for _, k := range sortedKeys(q.Queued, buf[:0]) {
			b = appendString(b, k)
			b = appendString(b, q.Queued[k])
		}
	}
	b = appendString(b, q.StallSig)
	b = binary.AppendVarint(b, int64(q.StallCount))
	b = binary.AppendUvarint(b, q.WallSession)
	b = appendTime(b, q.WallMark)
	b = binary.AppendUvarint(b, q.DispatchSeq)
	b = appendStrings(b, q.Replays)
	b = appendTime(b, q.Created)
	b = appendTime(b, q.Updated)
	b = appendString(b, q.Project) // V2
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(ss))+1)
	for _, s := range ss {
		b = appendString(b, s)
	}
	return b
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

// decodeQuest reads a quest record, binary or (written before schema 4)
// JSON, into q.
func decodeQuest(raw []byte, q *Quest) error {
	if len(raw) > 0 && raw[0] == '{' {
		return json.Unmarshal(raw, q)
	}
	if len(raw) == 0 || (raw[0] != questRecordV1 && raw[0] != questRecordV2) {
		return fmt.Errorf("%w: unknown form", errQuestRecord)
	}
	// One string holds the whole record: every string field is a slice
	// of it, so a decode costs one allocation for all its strings.
	r := &recordReader{b: raw[1:], s: string(raw[1:])}
	*q = Quest{}
	q.ID = r.string()
	q.Name = r.string()
	q.Direction = r.string()
	q.Status = QuestStatus(r.string())
	q.Reason = r.string()
	q.Mode = r.string()
	q.Roles = r.strings()
	q.Provider = r.string()
	q.Gate = r.string()
	q.Checkpoints = orNil(r.strings())
	q.Limits = Limits{MaxTries: r.int(), MaxAgentRuns: r.int(), WallClock: time.Duration(r.varint()),
		TokenBudget: r.int(), MaxStalled: r.int(), OwnerEvery: r.int()}
	q.Counters = Counters{AgentRuns: r.int(), Tokens: r.int(), WallUsed: time.Duration(r.varint())}
	if n := r.length(); n > 0 {
		q.Counts = make(map[Status]int, n-1)
		for range n - 1 {
			k := internStatus(r.string())
			q.Counts[k] = r.int()
		}
	}
	q.Running = r.string()
	// An empty Queued reads back as nil, as JSON's omitempty had it.
	if n := r.length(); n > 1 {
		q.Queued = make(map[string]string, n-1)
		for range n - 1 {
			k := r.string()
			q.Queued[k] = r.string()
		}
	}
	q.StallSig = r.string()
	q.StallCount = r.int()
	q.WallSession = r.uvarint()
	q.WallMark = r.time()
	q.DispatchSeq = r.uvarint()
	q.Replays = orNil(r.strings())
	q.Created = r.time()
	q.Updated = r.time()
	if raw[0] >= questRecordV2 {
		q.Project = r.string()
	}
	if r.err == nil && len(r.b) > 0 {
		r.err = fmt.Errorf("%w: %d bytes past its end", errQuestRecord, len(r.b))
	}
	return r.err
}

// orNil is ss, or nil when it is empty: the fields JSON wrote with
// omitempty read back as nil when empty, and still do.
func orNil(ss []string) []string {
	if len(ss) == 0 {
		return nil
	}
	return ss
}

// recordReader reads a binary record; the first error sticks and every
// read after it returns zero values.
type recordReader struct {
	b   []byte
	s   string // the record as a string, when set; r.b is its tail
	err error
}

func (r *recordReader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s cut short", errQuestRecord, what)
	}
	r.b = nil
}

func (r *recordReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("a number")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *recordReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail("a number")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *recordReader) int() int { return int(r.varint()) }

// length reads a list or map length plus one (0: nil), bounded by what
// is left of the record (each entry takes at least a byte).
func (r *recordReader) length() int {
	n := r.uvarint()
	if n > uint64(len(r.b))+1 {
		r.fail("a list")
		return 0
	}
	return int(n)
}

func (r *recordReader) string() string {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail("a string")
		return ""
	}
	var s string
	if r.s != "" {
		at := len(r.s) - len(r.b)
		s = r.s[at : at+int(n)]
	} else {
		s = string(r.b[:n])
	}
	r.b = r.b[n:]
	return s
}

// internStatus returns s as the constant of the status it names, so that
// map keys decoded from a record share the constants' bytes.
func internStatus(s string) Status {
	for _, k := range Statuses {
		if string(k) == s {
			return k
		}
	}
	return Status(s)
}

func (r *recordReader) strings() []string {
	n := r.length()
	if n == 0 {
		return nil
	}
	ss := make([]string, 0, n-1)
	for range n - 1 {
		ss = append(ss, r.string())
	}
	return ss
}

func (r *recordReader) time() time.Time {
	if len(r.b) == 0 {
		r.fail("a time")
		return time.Time{}
	}
	flag := r.b[0]
	r.b = r.b[1:]
	switch flag {
	case 0:
		return time.Time{}
	case 1:
		sec := r.varint()
		nsec := r.uvarint()
		if nsec >= 1e9 {
			r.fail("a time")
			return time.Time{}
		}
		return time.Unix(sec, int64(nsec)).UTC()
	}
	r.fail("a time")
	return time.Time{}
}

// getQuest reads quest id from the quests bucket b; ok is false when it
// does not exist.
func getQuest(b *bolt.Bucket, id string) (q *Quest, ok bool, err error) {
	raw := b.Get([]byte(id))
	if raw == nil {
		return nil, false, nil
	}
	q = new(Quest)
	if err := decodeQuest(raw, q); err != nil {
		return nil, false, fmt.Errorf("decode quest %s: %w", id, err)
	}
	return q, true, nil
}

// putQuest stores q in the quests bucket b.
func putQuest(b *bolt.Bucket, q *Quest) error {
	return b.Put([]byte(q.ID), encodeQuest(q))
}

// encodeQuests is the migration to schema 4: every quest record, JSON
// until then, is rewritten in the binary form.
func encodeQuests(tx *bolt.Tx) error {
	b := tx.Bucket(bQuests)
	var qs []*Quest
	err := b.ForEach(func(k, v []byte) error {
		q := new(Quest)
		if err := decodeQuest(v, q); err != nil {
			// Leave a record that does not decode as it is: verify and
			// salvage name it.
			return nil
		}
		if q.ID != string(k) {
			return nil
		}
		qs = append(qs, q)
		return nil
	})
	if err != nil {
		return err
	}
	for _, q := range qs {
		if err := putQuest(b, q); err != nil {
			return err
		}
	}
	return nil
}
