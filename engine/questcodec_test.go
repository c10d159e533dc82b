package engine

import (
	"encoding/hex"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/engine/storetest"
)

// genQuest draws a quest with every field set at random (strings valid
// UTF-8, as JSON keeps only those; times in UTC, as the engine's are,
// within the years JSON writes).
func genQuest(t *rapid.T) *Quest {
	str := rapid.String()
	strs := rapid.OneOf(rapid.Just([]string(nil)), rapid.SliceOf(str))
	tm := rapid.OneOf(rapid.Just(time.Time{}), rapid.Custom(func(t *rapid.T) time.Time {
		return time.Unix(rapid.Int64Range(-62_135_596_799, 253_402_300_799).Draw(t, "sec"), rapid.Int64Range(0, 999_999_999).Draw(t, "nsec")).UTC()
	}))
	n := rapid.IntRange(math.MinInt32, math.MaxInt32) // int is 32 bits on armv6
	q := &Quest{
		ID: str.Draw(t, "id"), Name: str.Draw(t, "name"), Direction: str.Draw(t, "direction"),
		Status: QuestStatus(str.Draw(t, "status")), Reason: str.Draw(t, "reason"), Mode: str.Draw(t, "mode"),
		Roles: strs.Draw(t, "roles"), Provider: str.Draw(t, "provider"), Gate: str.Draw(t, "gate"),
		Checkpoints: strs.Draw(t, "checkpoints"),
		Limits: Limits{MaxTries: n.Draw(t, "mt"), MaxAgentRuns: n.Draw(t, "mar"), WallClock: time.Duration(n.Draw(t, "wc")),
			TokenBudget: n.Draw(t, "tb"), MaxStalled: n.Draw(t, "ms"), OwnerEvery: n.Draw(t, "oe")},
		Counters: Counters{AgentRuns: n.Draw(t, "ar"), Tokens: n.Draw(t, "tk"), WallUsed: time.Duration(n.Draw(t, "wu"))},
		Running:  str.Draw(t, "running"), StallSig: str.Draw(t, "stallsig"), StallCount: n.Draw(t, "stallcount"),
		WallSession: rapid.Uint64().Draw(t, "session"), WallMark: tm.Draw(t, "mark"),
		DispatchSeq: rapid.Uint64().Draw(t, "seq"), Replays: strs.Draw(t, "replays"),
		Created: tm.Draw(t, "created"), Updated: tm.Draw(t, "updated"),
	}
	if rapid.Bool().Draw(t, "counts") {
		q.Counts.Make()
		for _, k := range rapid.SliceOf(rapid.SampledFrom(Statuses)).Draw(t, "count keys") {
			q.Counts.Set(string(k), int64(n.Draw(t, "count")))
		}
	}
	if rapid.Bool().Draw(t, "queued") {
		q.Queued = rapid.MapOf(str, str).Draw(t, "queued map")
	}
	return q
}

// TestEveryQuestFieldRoundTrips is the test a new field of Quest needs:
// every field of Quest (nested ones by path) has exactly one entry in
// questCodec's table, the table begins with the fields of the first binary
// form in their order (entries are only ever added at its end), and a
// quest with every field set reads back equal.
func TestEveryQuestFieldRoundTrips(t *testing.T) {
	fields := storetest.LeafFields(reflect.TypeFor[Quest]())
	names := questCodec.Names()
	if m := storetest.Missing(fields, names); m != "" {
		t.Fatalf("Quest fields without an entry in questCodec's table: %s (add each at the end of the table)", m)
	}
	if m := storetest.Missing(names, fields); m != "" || len(names) != len(fields) {
		t.Fatalf("questCodec's table has entries for no field of Quest, or twice: %v", names)
	}
	if !slices.Equal(names[:questFieldsV1], questFieldsOfV1) {
		t.Fatalf("the table's first %d entries are the first form's and never move:\n%v\nwant\n%v", questFieldsV1, names[:questFieldsV1], questFieldsOfV1)
	}
	var q Quest
	storetest.FillEvery(&q)
	var got Quest
	if err := decodeQuest(encodeQuest(&q), &got); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if !reflect.DeepEqual(got, q) {
		t.Fatalf("a quest with every field set reads back\n%#v\nwant\n%#v", got, q)
	}
}

// questFieldsOfV1 are the fields of the first binary form (schema 4), in
// its order.
var questFieldsOfV1 = []string{"ID", "Name", "Direction", "Status", "Reason", "Mode", "Roles", "Provider", "Gate", "Checkpoints",
	"Limits.MaxTries", "Limits.MaxAgentRuns", "Limits.WallClock", "Limits.TokenBudget", "Limits.MaxStalled", "Limits.OwnerEvery",
	"Counters.AgentRuns", "Counters.Tokens", "Counters.WallUsed", "Counts", "Running", "Queued", "StallSig", "StallCount",
	"WallSession", "WallMark", "DispatchSeq", "Replays", "Created", "Updated"}

func goldenQuest() *Quest {
	at := time.Date(2026, 12, 3, 4, 5, 6, 789, time.UTC)
	return &Quest{ID: "q7", Name: "name", Direction: "find the ✓ way", Status: QuestActive, Reason: "why", Mode: ModeTeam,
		Roles: []string{"scout", "owner"}, Provider: "demo", Gate: "default", Checkpoints: []string{"owner"},
		Limits:   Limits{MaxTries: 3, MaxAgentRuns: 50, WallClock: 24 * time.Hour, TokenBudget: 1_000_000, MaxStalled: -3, OwnerEvery: 2},
		Counters: Counters{AgentRuns: 7, Tokens: 1234, WallUsed: 90 * time.Minute},
		Counts:   domain.CountsOf(map[Status]int{Pending: 2, Running: 1, Aborted: 4}), Running: "n9", Queued: map[string]string{"owner": "n3", "strategist": "n4"},
		StallSig: "sig", StallCount: 2, WallSession: 5, WallMark: at, DispatchSeq: 99, Replays: []string{"n5"}, Created: at.Add(-time.Hour), Updated: at}
}

// goldenQuestV1 is goldenQuest as the hand-written encoder of schema 4
// wrote it (before the table drove it): the first form, no field count.
const goldenQuestV1 = "01027137046e616d651066696e642074686520e29c93207761790661637469766503776879047465616d030573636f7574056f776e65720464656d6f0764656661756c7402056f776e657206648080f89492a52780897a05040ea41380c0a791a9ba02040761626f72746564080770656e64696e67040772756e6e696e6702026e3903056f776e6572026e330a73747261746567697374026e3403736967040501e4a987b10d95066302026e3501c4f186b10d950601e4a987b10d9506"

// TestQuestRecordGolden pins the binary forms: a record of schema 4 reads
// back as it was written, and the form of schema 5 is that record's
// fields after the version byte 2 and their count, followed by the fields
// added since.
func TestQuestRecordGolden(t *testing.T) {
	q := goldenQuest()
	raw, _ := hex.DecodeString(goldenQuestV1)
	var back Quest
	if err := decodeQuest(raw, &back); err != nil || !reflect.DeepEqual(&back, q) {
		t.Errorf("the schema 4 record reads back %v\n%#v", err, back)
	}
	// The same fields, now counted, then the fields added since schema 5
	// began, empty: one zero byte each.
	added := len(questCodec.Names()) - questFieldsV1
	want := "02" + hex.EncodeToString([]byte{byte(len(questCodec.Names()))}) + goldenQuestV1[2:] + strings.Repeat("00", added)
	if got := hex.EncodeToString(encodeQuest(q)); got != want {
		t.Errorf("quest record\n%s\nwant\n%s", got, want)
	}
}

// A record written before a field was added reads with that field zero;
// one from a newer build, with more fields than the table, is an error.
func TestQuestRecordFieldCount(t *testing.T) {
	q := goldenQuest()
	raw := encodeQuest(q)
	// The same record as a build whose table ended at Replays would have
	// written it: count 28, no Created and Updated.
	var fewer []byte
	fewer = append(fewer, questRecordV2, 28)
	cut, _ := hex.DecodeString(goldenQuestV1[2:])
	tail := 2 * len(encodeTimeForTest(q.Created))
	fewer = append(fewer, cut[:len(cut)-tail]...)
	var got Quest
	if err := decodeQuest(fewer, &got); err != nil {
		t.Fatalf("a record with fewer fields: %v", err)
	}
	want := *q
	want.Created, want.Updated = time.Time{}, time.Time{}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("a record with fewer fields reads back\n%#v\nwant\n%#v", got, want)
	}
	newer := append([]byte{questRecordV2, byte(len(questCodec.Names()) + 1)}, raw[2:]...)
	newer = append(newer, 0)
	if err := decodeQuest(newer, new(Quest)); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("a record with a field this build does not know: %v, want an error saying it is newer", err)
	}
}

// encodeTimeForTest is a time field's bytes in a record.
func encodeTimeForTest(at time.Time) []byte {
	c := store.NewCodec(9, store.Time("T", func(t *time.Time) *time.Time { return t }))
	return c.Append(nil, &at)[2:]
}

// The binary form reads back exactly what a JSON record read back: the
// engine sees no difference between a quest stored before schema 4 and
// after.
func TestQuestRecordReadsAsJSONDid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		q := genQuest(t)
		raw, err := json.Marshal(q)
		if err != nil {
			t.Fatal(err)
		}
		var want Quest
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		var got Quest
		if err := decodeQuest(encodeQuest(q), &got); err != nil {
			t.Fatalf("decode: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("binary record reads back\n%#v\nJSON read back\n%#v", got, want)
		}
		var fromJSON Quest
		if err := decodeQuest(raw, &fromJSON); err != nil || !reflect.DeepEqual(fromJSON, want) {
			t.Fatalf("a JSON record through decodeQuest: %v, %#v", err, fromJSON)
		}
	})
}

// A record cut short or with bytes past its end is an error, never a
// panic or a quest made up of what was there.
func TestQuestRecordDamageIsAnError(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		raw := encodeQuest(genQuest(t))
		cut := rapid.IntRange(0, len(raw)-1).Draw(t, "cut")
		if err := decodeQuest(raw[:cut], new(Quest)); err == nil {
			t.Fatalf("a record cut at %d of %d bytes decoded", cut, len(raw))
		}
		if err := decodeQuest(append(raw, 0), new(Quest)); err == nil {
			t.Fatal("a record with a byte past its end decoded")
		}
	})
	rapid.Check(t, func(t *rapid.T) {
		_ = decodeQuest(append([]byte{questRecordV1}, rapid.SliceOf(rapid.Byte()).Draw(t, "garbage")...), new(Quest))
		_ = decodeQuest(append([]byte{questRecordV2}, rapid.SliceOf(rapid.Byte()).Draw(t, "garbage")...), new(Quest))
	})
}

// A store of schema 3 (quest records in JSON) migrates to the binary form
// at the next writing open, and reads as it is in a read-only open.
func TestQuestRecordsMigrate(t *testing.T) {
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal; s.Checkpoints = []string{RoleScout} })
	want := h.questNow(q.ID)
	want.Rev = 0 // a record of schema 3 has no revision (and JSON keeps none)
	// Back to schema 3: the quest as JSON.
	err := h.store.db.Update(func(tx *store.Tx) error {
		raw, err := json.Marshal(want)
		if err != nil {
			return err
		}
		if err := tx.Quests().Put([]byte(q.ID), raw); err != nil {
			return err
		}
		return tx.Meta().Put(kSchema, u64(3))
	})
	if err != nil {
		t.Fatal(err)
	}
	h.close()

	ro, err := OpenStore(h.dir, StoreOptions{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open of schema 3: %v", err)
	}
	e, err := New(ro, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := e.Quest(q.ID); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("schema 3 read as it is: %v\n%#v\nwant\n%#v", err, got, want)
	}
	ro.Close()

	h.open()
	var raw []byte
	_ = h.store.view(func(tx *store.Tx) error { raw = append(raw, tx.Quests().Get([]byte(q.ID))...); return nil })
	if len(raw) == 0 || raw[0] != questRecordV2 {
		t.Errorf("after the upgrade the quest record starts with %q, want the binary form", raw[:1])
	}
	if got := h.questNow(q.ID); !reflect.DeepEqual(got, want) {
		t.Errorf("after the upgrade:\n%#v\nwant\n%#v", got, want)
	}
}

// BenchmarkQuestRecord is one encode and one decode of a quest record,
// the tick's per-quest codec work.
func BenchmarkQuestRecord(b *testing.B) {
	q := &Quest{ID: "q7", Name: "name", Direction: "find the way", Status: QuestActive, Mode: ModeTeam,
		Roles: []string{"scout", "owner"}, Provider: "demo", Gate: "default", Limits: domain.DefaultLimits(),
		Counters: Counters{AgentRuns: 7, Tokens: 1234, WallUsed: 90 * time.Minute},
		Counts:   domain.CountsOf(map[Status]int{Pending: 2, Running: 1, Aborted: 4}), Running: "n9", Queued: map[string]string{"owner": "n3"},
		WallSession: 5, WallMark: time.Unix(1e9, 5).UTC(), DispatchSeq: 99, Created: time.Unix(1e9, 0).UTC(), Updated: time.Unix(1e9, 7).UTC()}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = appendQuest(buf[:0], q)
		var got Quest
		if err := decodeQuest(buf, &got); err != nil {
			b.Fatal(err)
		}
	}
}
