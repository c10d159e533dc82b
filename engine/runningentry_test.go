package engine

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
func sameRun(got, want Run) string {
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
		r := Run{ID: id, Name: jsonText.Draw(t, "name"), Quest: quest, Node: node, Role: jsonText.Draw(t, "role"),
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
		v := appendRunning([]byte("prefix"), quest, node, &r)[len("prefix"):]
		if !isCompactRunning(v) {
			t.Fatalf("entry %x is not in the compact form", v)
		}
		var got Run
		if err := decodeRunning(key, v, &got); err != nil {
			t.Fatalf("decode %x: %v", v, err)
		}
		if d := sameRun(got, r); d != "" {
			t.Fatalf("round trip: %s\ngot  %+v\nwant %+v", d, got, r)
		}
		e, ok := scanRunEntry(v)
		if want := (runEntry{ID: r.ID, Role: r.Role, Provider: r.Provider, Reserved: r.Reserved}); !ok || e != want {
			t.Fatalf("scanRunEntry: %+v, %v; want %+v", e, ok, want)
		}
		if got, want := runRecord(key, v), appendRun(nil, &r); !bytes.Equal(got, want) {
			t.Fatalf("runs bucket record:\n%s\nwant\n%s", got, want)
		}
	})
}

// Every field of Run is in the compact entry: a run with only that field
// set comes back with it. A new field of Run fails here until
// appendRunning and decodeCompactRunning carry it.
func TestEveryRunFieldInARunningEntry(t *testing.T) {
	typ := reflect.TypeFor[Run]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !storetest.Recorded(f) {
			continue
		}
		t.Run(f.Name, func(t *testing.T) {
			var r Run
			n := i
			storetest.FillValue(reflect.ValueOf(&r).Elem().Field(i), &n)
			if reflect.ValueOf(r).Field(i).IsZero() {
				t.Fatalf("FillValue left %s zero", f.Name)
			}
			var got Run
			if err := decodeRunning(store.RunningKey("q1", "n1"), appendRunning(nil, "q1", "n1", &r), &got); err != nil {
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
	var r Run
	storetest.FillEvery(&r)
	var got Run
	if err := decodeRunning(store.RunningKey("q9", "n9"), appendRunning(nil, "q9", "n9", &r), &got); err != nil {
		t.Fatal(err)
	}
	if d := sameRun(got, r); d != "" {
		t.Errorf("every field set: %s\ngot  %+v\nwant %+v", d, got, r)
	}
}

// A damaged compact entry is refused, never read as another run: cut at
// every length, and with any one byte changed (the checksum).
func TestDamagedRunningEntryRefused(t *testing.T) {
	r := Run{ID: "r1234", Quest: "q7", Node: "n99", Role: "critic", Provider: "command", Attempt: 2,
		Started: time.Date(2026, 12, 3, 23, 0, 0, 123, time.UTC), BytesIn: 4096, Redacted: true}
	key := store.RunningKey(r.Quest, r.Node)
	v := appendRunning(nil, r.Quest, r.Node, &r)
	var got Run
	if err := decodeRunning(key, v, &got); err != nil {
		t.Fatal(err)
	}
	for i := range len(v) {
		if err := decodeRunning(key, v[:i], &got); err == nil {
			t.Errorf("cut to %d of %d bytes: decoded %+v", i, len(v), got)
		}
		if _, ok := scanRunEntry(v[:i]); ok && i > 0 {
			t.Errorf("cut to %d of %d bytes: scanned", i, len(v))
		}
		for _, x := range []byte{0x01, 0x80, 0xff} {
			d := bytes.Clone(v)
			d[i] ^= x
			if err := decodeRunning(key, d, &got); err == nil {
				t.Errorf("byte %d ^ %#x: decoded %+v", i, x, got)
			}
		}
	}
}

// What a run in flight reads as is the same whether its running entry is
// compact (schema 8) or the JSON a schema 6 or 7 store holds: the node
// running with its run, the quest counting it, the runs listed and found,
// and, after a restart, the interrupted run's record in the runs bucket,
// byte for byte.
func TestJSONRunningEntriesStillRead(t *testing.T) {
	type seen struct {
		status      Status
		runs        []string
		counts      StatusCounts
		agent       int
		listed      []Run
		found       Run
		record      []byte
		runningLeft int
	}
	look := func(t *testing.T, toJSON bool) seen {
		h := newHarness(t, Options{})
		q := h.quest(func(s *QuestSpec) { s.Provider, s.Mode = ProviderExternal, ModeSolo })
		if _, err := h.e.Scan(q.ID, []string{"first idea", "second idea"}); err != nil {
			t.Fatal(err)
		}
		node, run := dispatchOne(t, h, q.ID)
		if err := h.store.update(func(tx *store.Tx) error {
			k := store.RunningKey(q.ID, node)
			v := tx.Running().Get(k)
			if !isCompactRunning(v) || len(v) > 64 {
				t.Errorf("the dispatch wrote %d bytes %x, want a compact entry", len(v), v)
			}
			if !toJSON {
				return nil
			}
			var r Run
			if err := decodeRunning(k, v, &r); err != nil {
				return err
			}
			return tx.Running().Put(k, appendRun(nil, &r)) // as schema 7 wrote it
		}); err != nil {
			t.Fatal(err)
		}
		var s seen
		n := h.node(node)
		s.status, s.runs = n.Status, n.Runs
		got := h.questNow(q.ID)
		s.counts, s.agent = got.Counts, got.Counters.AgentRuns
		var err error
		if s.listed, err = h.e.QuestRuns(q.ID, ""); err != nil {
			t.Fatal(err)
		}
		if s.found, err = h.e.FindRun(run); err != nil {
			t.Fatal(err)
		}
		h.restart()
		_ = h.store.view(func(tx *store.Tx) error {
			s.record = bytes.Clone(tx.Runs().Get([]byte(run)))
			s.runningLeft = tx.Running().KeyN()
			return nil
		})
		return s
	}
	compact, old := look(t, false), look(t, true)
	if compact.status != Running || len(compact.listed) != 1 || compact.found.ID == "" || compact.found.Provider != "p" || len(compact.record) == 0 || compact.runningLeft != 0 {
		t.Fatalf("compact entry: %+v", compact)
	}
	if !reflect.DeepEqual(compact, old) {
		t.Errorf("a JSON entry reads otherwise than a compact one:\ncompact %+v\njson    %+v", compact, old)
	}
}
