package records

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/engine/storetest"
	"github.com/questbox/questbox/gates"
	"pgregory.net/rapid"
)

// TestEventGroupRoundTrip: a group of events, each with any fields, reads
// back as the events were, each with its seq and the group's time, byte
// for byte as a reader's JSON shows them.
func TestEventGroupRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		str := jsonText
		at := genTime(t, "time")
		seq := rapid.Uint64Range(1, math.MaxUint64/2).Draw(t, "first")
		var evs []domain.Event
		for i := range rapid.IntRange(1, 6).Draw(t, "events") {
			if i > 0 {
				seq += rapid.Uint64Range(1, 1000).Draw(t, "gap")
			}
			ev := domain.Event{Seq: seq, Time: at, Kind: str.Draw(t, "kind"),
				Quest: str.Draw(t, "quest"), Node: str.Draw(t, "node"), Role: str.Draw(t, "role"),
				Team: str.Draw(t, "team"), Stage: str.Draw(t, "stage"), Phase: str.Draw(t, "phase"), From: str.Draw(t, "from"),
				To: str.Draw(t, "to"), Outcome: str.Draw(t, "outcome"), Feedback: str.Draw(t, "feedback"),
				RootCause: str.Draw(t, "rootcause"), ClaimHash: str.Draw(t, "claimhash"), Reason: str.Draw(t, "reason"),
				Detail: str.Draw(t, "detail")}
			for range rapid.IntRange(0, 3).Draw(t, "facts") {
				ev.Facts = append(ev.Facts, gates.Fact{Rule: str.Draw(t, "rule"), Level: rapid.SampledFrom([]gates.Level{gates.Fail, gates.Review}).Draw(t, "level"),
					Where: str.Draw(t, "where"), Expected: str.Draw(t, "expected"), Actual: str.Draw(t, "actual")})
			}
			if rapid.Bool().Draw(t, "counters") {
				n := rapid.IntRange(math.MinInt32, math.MaxInt32)
				ev.Counters = &domain.Counters{AgentRuns: n.Draw(t, "runs"), Tokens: n.Draw(t, "tokens"), WallUsed: time.Duration(rapid.Int64().Draw(t, "wall"))}
			}
			if rapid.Bool().Draw(t, "device") {
				ev.Device = &domain.DeviceEvent{What: str.Draw(t, "what"), Press: str.Draw(t, "press"), Result: str.Draw(t, "result"),
					Target: str.Draw(t, "target"), Broker: str.Draw(t, "broker"), Error: str.Draw(t, "error"), Fault: rapid.Bool().Draw(t, "fault")}
			}
			evs = append(evs, ev)
		}
		got := roundTrip(t, evs)
		if len(got) != len(evs) {
			t.Fatalf("%d events back, want %d", len(got), len(evs))
		}
		for i := range evs {
			// The strings come back byte for byte; the facts and the
			// device as a single record's JSON gave them (invalid UTF-8
			// as U+FFFD).
			want := evs[i]
			if want.Facts != nil {
				want.Facts = nil
				raw, _ := json.Marshal(evs[i].Facts)
				_ = json.Unmarshal(raw, &want.Facts)
			}
			if want.Device != nil {
				want.Device = new(domain.DeviceEvent)
				raw, _ := json.Marshal(evs[i].Device)
				_ = json.Unmarshal(raw, want.Device)
			}
			if !reflect.DeepEqual(got[i], want) {
				t.Fatalf("event %d read back as\n%#v\nwant\n%#v", i, got[i], want)
			}
		}
	})
}

// roundTrip encodes evs as one group and reads it back.
func roundTrip(t interface{ Fatalf(string, ...any) }, evs []domain.Event) []domain.Event {
	g, err := EncodeGroup(evs)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	var got []domain.Event
	if _, err := EachEvent(store.U64(evs[0].Seq), g, 0, func(ev *domain.Event) bool { got = append(got, *ev); return true }); err != nil {
		t.Fatalf("decode: %v", err)
	}
	return got
}

// TestEveryEventFieldIsInAGroup: an event with every field set reads back
// from a group as it was — a new field of Event fails here until
// eventString (or the group's other fields) carries it.
func TestEveryEventFieldIsInAGroup(t *testing.T) {
	var ev domain.Event
	storetest.FillEvery(&ev)
	ev.Time = ev.Time.UTC()
	want, err := json.Marshal(&ev)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(&roundTrip(t, []domain.Event{ev})[0])
	if !bytes.Equal(got, want) {
		t.Errorf("read back from a group:\n%s\nwant\n%s", got, want)
	}
}

// TestDamagedGroupIsRefused: a group cut short anywhere, or with any byte
// changed, or under a key that is not its first seq, does not decode (and
// nothing panics): verify and salvage rely on it.
func TestDamagedGroupIsRefused(t *testing.T) {
	evs := []domain.Event{{Seq: 7, Kind: domain.KindNode, Quest: "q1", Node: "n3", From: "pending", To: "running"},
		{Seq: 8, Kind: domain.KindVerdict, Quest: "q1", Node: "n3", Outcome: "FAIL", Facts: []gates.Fact{{Rule: "r", Level: gates.Fail}}}}
	g, err := EncodeGroup(evs)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckGroup(store.U64(7), g); err != nil {
		t.Fatalf("the sound group: %v", err)
	}
	if err := CheckGroup(store.U64(8), g); !errors.Is(err, ErrGroup) {
		t.Errorf("under key 8: %v, want ErrGroup", err)
	}
	for n := range len(g) {
		if err := CheckGroup(store.U64(7), g[:n]); err == nil {
			t.Errorf("cut to %d of %d bytes: decodes", n, len(g))
		}
	}
	for i := range g {
		bad := bytes.Clone(g)
		bad[i] ^= 0x10
		if err := CheckGroup(store.U64(7), bad); err == nil {
			t.Errorf("byte %d changed: decodes", i)
		}
	}
}

// HoldsPast, which retention asks of the record straddling its window,
// says what LastSeqIn, reading the whole record, says: whether an event
// past limit is in it, for a group with gaps at every limit around its
// seqs, and for a single record.
func TestHoldsPastIsLastSeqIn(t *testing.T) {
	at := time.Date(2026, 12, 3, 23, 0, 0, 0, time.UTC)
	var evs []domain.Event
	for _, s := range []uint64{10, 11, 14, 15, 20, 31} {
		evs = append(evs, domain.Event{Seq: s, Time: at, Kind: "node", Quest: "q1"})
	}
	group, err := EncodeGroup(evs)
	if err != nil {
		t.Fatal(err)
	}
	single := AppendRun(nil, &domain.Run{ID: "not an event, but not a group either"})
	for _, rec := range []struct {
		name string
		k, v []byte
	}{{"group", store.U64(10), group}, {"single", store.U64(17), single}} {
		last, err := LastSeqIn(rec.k, rec.v)
		if err != nil {
			t.Fatal(err)
		}
		for limit := uint64(0); limit <= 40; limit++ {
			got, err := HoldsPast(rec.k, rec.v, limit)
			if want := last > limit; err != nil || got != want {
				t.Errorf("%s, limit %d: %v, %v; want %v (its last seq %d)", rec.name, limit, got, err, want, last)
			}
		}
	}
	damaged := bytes.Clone(group)
	damaged[len(damaged)/2] ^= 0x40
	if _, err := HoldsPast(store.U64(10), damaged, 0); err == nil {
		t.Error("a damaged group: no error")
	}
}

// BenchmarkRetentionStraddle: what retention reads of the 1,000-event
// group that straddles its window (limit at its middle), read whole
// (LastSeqIn, before) and up to the first event past the limit (HoldsPast).
func BenchmarkRetentionStraddle(b *testing.B) {
	at := time.Date(2026, 12, 3, 23, 0, 0, 0, time.UTC)
	evs := make([]domain.Event, 1000)
	for i := range evs {
		evs[i] = domain.Event{Seq: uint64(1001 + i), Time: at, Kind: "node", Quest: "q1", Node: "n1", From: "pending", To: "running", Detail: "dispatched to p"}
	}
	group, err := EncodeGroup(evs)
	if err != nil {
		b.Fatal(err)
	}
	k, limit := store.U64(1001), uint64(1500)
	b.Run("LastSeqIn", func(b *testing.B) {
		for b.Loop() {
			if end, err := LastSeqIn(k, group); err != nil || end <= limit {
				b.Fatal(end, err)
			}
		}
	})
	b.Run("HoldsPast", func(b *testing.B) {
		for b.Loop() {
			if past, err := HoldsPast(k, group, limit); err != nil || !past {
				b.Fatal(past, err)
			}
		}
	})
}
