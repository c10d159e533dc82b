package records

import (
	"bytes"
	"math"
	"reflect"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/engine/storetest"
)

// sameRun reports how got differs from want ("" if it does not): every
// field equal, times the same instant with the same offset from UTC (the
// *time.Location of a fixed zone is a new pointer at each decode).
func sameRun(got, want domain.Run) string {
	for _, p := range []struct {
		name   string
		g, w   time.Time
		gz, wz *time.Time
	}{{"started", got.Started, want.Started, &got.Started, &want.Started}, {"ended", got.Ended, want.Ended, &got.Ended, &want.Ended}} {
		_, goff := p.g.Zone()
		_, woff := p.w.Zone()
		if !p.g.Equal(p.w) || goff != woff || p.g.IsZero() != p.w.IsZero() {
			return p.name + ": " + p.g.String() + ", want " + p.w.String()
		}
		*p.gz, *p.wz = time.Time{}, time.Time{}
	}
	if got != want {
		return "fields differ"
	}
	return ""
}

func genZonedTime(t *rapid.T, label string) time.Time {
	if rapid.Bool().Draw(t, label+" zero") {
		return time.Time{}
	}
	tm := time.Unix(rapid.Int64Range(-62135596800, 253402300799).Draw(t, label), rapid.Int64Range(0, 999_999_999).Draw(t, label+" ns")).UTC()
	// The zero instant is "not set" (time.Time.IsZero) in any zone, and
	// is stored as such: it stays in UTC here, or the case would only
	// test that a zone of an unset time is not kept.
	if rapid.Bool().Draw(t, label+" zoned") && !tm.IsZero() {
		tm = tm.In(time.FixedZone("", rapid.IntRange(-14*3600, 14*3600).Draw(t, label+" offset")))
	}
	return tm
}

// A compact running entry decodes to the run it was made of, every field,
// at the edges of each (ids of the form r<n> and of any other, quest and
// node the key's or not, zero and zoned times, extreme integers); its
// JSON when it moves to the runs bucket is the run's JSON, byte for byte,
// as the old entry was.
func TestRunningEntryRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		quest, node := "q"+rapid.StringMatching(`[0-9]{1,6}`).Draw(t, "quest"), "n"+rapid.StringMatching(`[0-9]{1,8}`).Draw(t, "node")
		ints := rapid.OneOf(rapid.IntRange(math.MinInt32, math.MaxInt32), rapid.SampledFrom([]int{0, 1, -1, math.MinInt, math.MaxInt}))
		int64s := rapid.OneOf(rapid.Int64(), rapid.SampledFrom([]int64{0, 1, -1, math.MinInt64, math.MaxInt64}))
		id := rapid.OneOf(
			rapid.Custom(func(t *rapid.T) string { return domain.RunID(rapid.Uint64Min(1).Draw(t, "seq")) }),
			rapid.SampledFrom([]string{"", "r0", "r007", "r", "x1", "r18446744073709551616"}),
			jsonText,
		).Draw(t, "id")
		r := domain.Run{ID: id, Name: jsonText.Draw(t, "name"), Quest: quest, Node: node, Role: jsonText.Draw(t, "role"),
			Provider: jsonText.Draw(t, "provider"), Attempt: ints.Draw(t, "attempt"), Started: genZonedTime(t, "started"),
			Ended: genZonedTime(t, "ended"), Outcome: jsonText.Draw(t, "outcome"), Exit: jsonText.Draw(t, "exit"),
			ExitCode: ints.Draw(t, "exit code"), Tokens: ints.Draw(t, "tokens"), BytesIn: int64s.Draw(t, "bytes in"),
			BytesOut: int64s.Draw(t, "bytes out"), Error: jsonText.Draw(t, "error"), Redacted: rapid.Bool().Draw(t, "redacted"),
			Reserved: ints.Draw(t, "reserved")}
		if rapid.Bool().Draw(t, "quest not the key's") {
			r.Quest = jsonText.Draw(t, "other quest")
		}
		if rapid.Bool().Draw(t, "node not the key's") {
			r.Node = jsonText.Draw(t, "other node")
		}
		key := store.RunningKey(quest, node)
		v := AppendRunning([]byte("prefix"), quest, node, &r)[len("prefix"):]
		if !IsCompactRunning(v) {
			t.Fatalf("entry %x is not in the compact form", v)
		}
		var got domain.Run
		if err := DecodeRunning(key, v, &got); err != nil {
			t.Fatalf("decode %x: %v", v, err)
		}
		if d := sameRun(got, r); d != "" {
			t.Fatalf("round trip: %s\ngot  %+v\nwant %+v", d, got, r)
		}
		e, ok := ScanRunEntry(v)
		if want := (RunEntry{ID: r.ID, Role: r.Role, Provider: r.Provider, Reserved: r.Reserved}); !ok || e != want {
			t.Fatalf("ScanRunEntry: %+v, %v; want %+v", e, ok, want)
		}
		if got, want := RunRecord(key, v), AppendRun(nil, &r); !bytes.Equal(got, want) {
			t.Fatalf("runs bucket record:\n%s\nwant\n%s", got, want)
		}
	})
}

// Every field of Run is in the compact entry: a run with only that field
// set comes back with it. A new field of Run fails here until
// AppendRunning and DecodeCompactRunning carry it.
func TestEveryRunFieldInARunningEntry(t *testing.T) {
	typ := reflect.TypeFor[domain.Run]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !storetest.Recorded(f) {
			continue
		}
		t.Run(f.Name, func(t *testing.T) {
			var r domain.Run
			n := i
			storetest.FillValue(reflect.ValueOf(&r).Elem().Field(i), &n)
			if reflect.ValueOf(r).Field(i).IsZero() {
				t.Fatalf("FillValue left %s zero", f.Name)
			}
			var got domain.Run
			if err := DecodeRunning(store.RunningKey("q1", "n1"), AppendRunning(nil, "q1", "n1", &r), &got); err != nil {
				t.Fatal(err)
			}
			if got.Quest == "q1" && r.Quest == "" {
				got.Quest = "" // from the key
			}
			if got.Node == "n1" && r.Node == "" {
				got.Node = ""
			}
			if d := sameRun(got, r); d != "" {
				t.Errorf("%s: %s\ngot  %+v\nwant %+v", f.Name, d, got, r)
			}
		})
	}
	var r domain.Run
	storetest.FillEvery(&r)
	var got domain.Run
	if err := DecodeRunning(store.RunningKey("q9", "n9"), AppendRunning(nil, "q9", "n9", &r), &got); err != nil {
		t.Fatal(err)
	}
	if d := sameRun(got, r); d != "" {
		t.Errorf("every field set: %s\ngot  %+v\nwant %+v", d, got, r)
	}
}

// A damaged compact entry is refused, never read as another run: cut at
// every length, and with any one byte changed (the checksum).
func TestDamagedRunningEntryRefused(t *testing.T) {
	r := domain.Run{ID: "r1234", Quest: "q7", Node: "n99", Role: "critic", Provider: "command", Attempt: 2,
		Started: time.Date(2026, 12, 3, 23, 0, 0, 123, time.UTC), BytesIn: 4096, Redacted: true}
	key := store.RunningKey(r.Quest, r.Node)
	v := AppendRunning(nil, r.Quest, r.Node, &r)
	var got domain.Run
	if err := DecodeRunning(key, v, &got); err != nil {
		t.Fatal(err)
	}
	for i := range len(v) {
		if err := DecodeRunning(key, v[:i], &got); err == nil {
			t.Errorf("cut to %d of %d bytes: decoded %+v", i, len(v), got)
		}
		if _, ok := ScanRunEntry(v[:i]); ok && i > 0 {
			t.Errorf("cut to %d of %d bytes: scanned", i, len(v))
		}
		for _, x := range []byte{0x01, 0x80, 0xff} {
			d := bytes.Clone(v)
			d[i] ^= x
			if err := DecodeRunning(key, d, &got); err == nil {
				t.Errorf("byte %d ^ %#x: decoded %+v", i, x, got)
			}
		}
	}
}
