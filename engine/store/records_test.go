package store

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
	"time"
)

// Each hand-written record reads back as it was written, field for field,
// and refuses any one byte changed (its seal).
func TestRecordsRoundTrip(t *testing.T) {
	zone := time.FixedZone("", 3600)
	at := time.Date(2026, 12, 3, 23, 0, 0, 123, time.UTC)
	t.Run("running entry", func(t *testing.T) {
		for name, e := range map[string]RunningEntry{
			"numbered": {ID: "r12", Quest: "q1", Node: "n2", Role: "critic", Provider: "command", Attempt: 2, Started: at, Reserved: 300},
			"other id": {ID: "x7", Name: "quest:q1:n2:1", Quest: "q9", Node: "n9", Started: at.In(zone), Ended: at.Add(time.Second),
				Outcome: "PASS", Exit: "ok", ExitCode: -1, Tokens: 5, BytesIn: 1 << 40, BytesOut: -3, Error: "e", Redacted: true, CostUSD: 0.25},
			"zero": {Quest: "q1", Node: "n2"},
		} {
			v := AppendRunning(nil, "q1", "n2", &e, 0)
			var got RunningEntry
			if err := DecodeRunning(v, "q1", "n2", &got); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !sameEntry(got, e) {
				t.Errorf("%s: got %+v, want %+v", name, got, e)
			}
			for i := range v {
				bad := bytes.Clone(v)
				bad[i] ^= 0x10
				if err := DecodeRunning(bad, "q1", "n2", &got); !errors.Is(err, ErrRunningEntry) {
					t.Errorf("%s: byte %d changed: %v", name, i, err)
				}
			}
		}
	})
	t.Run("attempt", func(t *testing.T) {
		for name, a := range map[string]Attempt{
			"facts":    {At: at, Run: "r1", Outcome: "FAIL", Facts: []Fact{{Rule: "contract", Level: 2, Where: "verdict", Expected: "x", Actual: "y"}}, Feedback: "f", ClaimHash: "h", TryUsed: true, Repeats: 3},
			"no facts": {At: at.In(zone), Outcome: "PASS", Facts: []Fact{}},
			"zero":     {},
		} {
			v := AppendAttempt(nil, "n12", 99, &a)
			r, err := DecodeAttempt(v)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if r.Node != "n12" || r.Prev != 99 || !r.Attempt.At.Equal(a.At) || zoneOf(r.Attempt.At) != zoneOf(a.At) {
				t.Errorf("%s: got %+v", name, r)
			}
			r.Attempt.At = a.At
			if !reflect.DeepEqual(r.Attempt, a) {
				t.Errorf("%s: got %+v, want %+v", name, r.Attempt, a)
			}
			for i := range v {
				bad := bytes.Clone(v)
				bad[i] ^= 0x10
				if _, err := DecodeAttempt(bad); !errors.Is(err, ErrAttempt) {
					t.Errorf("%s: byte %d changed: %v", name, i, err)
				}
			}
		}
	})
	t.Run("event group", func(t *testing.T) {
		evs := []GroupEvent{{Seq: 7}, {Seq: 9, Facts: []byte(`[]`), HasCounters: true, Counters: [3]int64{1, -2, 3}, Device: []byte(`{}`)}}
		evs[0].Strings[0], evs[0].Strings[14] = "node", "detail"
		b := AppendGroupHead(nil, 7, at)
		prev := uint64(7)
		for i := range evs {
			var err error
			if b, err = AppendGroupEvent(b, prev, &evs[i]); err != nil {
				t.Fatal(err)
			}
			prev = evs[i].Seq
		}
		g := SealGroup(b)
		if first, ok := GroupKey(g); !ok || first != 7 {
			t.Fatalf("GroupKey: %d, %v", first, ok)
		}
		if last, err := LastSeqIn(U64(7), g); err != nil || last != 9 {
			t.Fatalf("LastSeqIn: %d, %v", last, err)
		}
		r, err := OpenGroup(U64(7), g)
		if err != nil {
			t.Fatal(err)
		}
		var f GroupFields
		for i := range evs {
			if more, err := r.Next(&f, 0); !more || err != nil {
				t.Fatalf("event %d: %v, %v", i, more, err)
			}
			w := &evs[i]
			if f.Seq != w.Seq || string(f.Strings[0]) != w.Strings[0] || string(f.Strings[14]) != w.Strings[14] ||
				!bytes.Equal(f.Facts, w.Facts) || !bytes.Equal(f.Device, w.Device) || f.HasCounters != w.HasCounters || f.Counters != w.Counters {
				t.Errorf("event %d: got %+v, want %+v", i, f, *w)
			}
		}
		if more, err := r.Next(&f, 0); more || err != nil {
			t.Errorf("past the end: %v, %v", more, err)
		}
		if !r.Time().Equal(at) {
			t.Errorf("time %v, want %v", r.Time(), at)
		}
		if _, err := OpenGroup(U64(8), g); !errors.Is(err, ErrGroup) {
			t.Errorf("under key 8: %v, want ErrGroup", err)
		}
	})
}

// sameEntry is e == w with times compared as instants with their offsets.
func sameEntry(e, w RunningEntry) bool {
	if !e.Started.Equal(w.Started) || zoneOf(e.Started) != zoneOf(w.Started) || !e.Ended.Equal(w.Ended) || zoneOf(e.Ended) != zoneOf(w.Ended) {
		return false
	}
	e.Started, e.Ended, w.Started, w.Ended = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	return e == w
}
