package records

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
func genQuest(t *rapid.T) *domain.Quest {
	str := rapid.String()
	strs := rapid.OneOf(rapid.Just([]string(nil)), rapid.SliceOf(str))
	tm := rapid.OneOf(rapid.Just(time.Time{}), rapid.Custom(func(t *rapid.T) time.Time {
		return time.Unix(rapid.Int64Range(-62_135_596_799, 253_402_300_799).Draw(t, "sec"), rapid.Int64Range(0, 999_999_999).Draw(t, "nsec")).UTC()
	}))
	n := rapid.IntRange(math.MinInt32, math.MaxInt32) // int is 32 bits on armv6
	q := &domain.Quest{
		ID: str.Draw(t, "id"), Name: str.Draw(t, "name"), Direction: str.Draw(t, "direction"),
		Status: domain.QuestStatus(str.Draw(t, "status")), Reason: str.Draw(t, "reason"), Mode: str.Draw(t, "mode"),
		Roles: strs.Draw(t, "roles"), Provider: str.Draw(t, "provider"), Gate: str.Draw(t, "gate"),
		Checkpoints: strs.Draw(t, "checkpoints"),
		Limits: domain.Limits{MaxTries: n.Draw(t, "mt"), MaxAgentRuns: n.Draw(t, "mar"), WallClock: time.Duration(n.Draw(t, "wc")),
			TokenBudget: n.Draw(t, "tb"), MaxStalled: n.Draw(t, "ms"), OwnerEvery: n.Draw(t, "oe")},
		Counters: domain.Counters{AgentRuns: n.Draw(t, "ar"), Tokens: n.Draw(t, "tk"), WallUsed: time.Duration(n.Draw(t, "wu"))},
		Running:  str.Draw(t, "running"), StallSig: str.Draw(t, "stallsig"), StallCount: n.Draw(t, "stallcount"),
		WallSession: rapid.Uint64().Draw(t, "session"), WallMark: tm.Draw(t, "mark"),
		DispatchSeq: rapid.Uint64().Draw(t, "seq"), Replays: strs.Draw(t, "replays"),
		Created: tm.Draw(t, "created"), Updated: tm.Draw(t, "updated"),
	}
	if rapid.Bool().Draw(t, "counts") {
		q.Counts.Make()
		for _, k := range rapid.SliceOf(rapid.SampledFrom(domain.Statuses)).Draw(t, "count keys") {
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
// QuestCodec's table, the table begins with the fields of the first binary
// form in their order (entries are only ever added at its end), and a
// quest with every field set reads back equal.
func TestEveryQuestFieldRoundTrips(t *testing.T) {
	fields := storetest.LeafFields(reflect.TypeFor[domain.Quest]())
	names := QuestCodec.Names()
	if m := storetest.Missing(fields, names); m != "" {
		t.Fatalf("Quest fields without an entry in QuestCodec's table: %s (add each at the end of the table)", m)
	}
	if m := storetest.Missing(names, fields); m != "" || len(names) != len(fields) {
		t.Fatalf("QuestCodec's table has entries for no field of Quest, or twice: %v", names)
	}
	if !slices.Equal(names[:QuestFieldsV1], questFieldsOfV1) {
		t.Fatalf("the table's first %d entries are the first form's and never move:\n%v\nwant\n%v", QuestFieldsV1, names[:QuestFieldsV1], questFieldsOfV1)
	}
	var q domain.Quest
	storetest.FillEvery(&q)
	var got domain.Quest
	if err := DecodeQuest(EncodeQuest(&q), &got); err != nil {
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

func goldenQuest() *domain.Quest {
	at := time.Date(2026, 12, 3, 4, 5, 6, 789, time.UTC)
	return &domain.Quest{ID: "q7", Name: "name", Direction: "find the ✓ way", Status: domain.QuestActive, Reason: "why", Mode: domain.ModeTeam,
		Roles: []string{"scout", "owner"}, Provider: "demo", Gate: "default", Checkpoints: []string{"owner"},
		Limits:   domain.Limits{MaxTries: 3, MaxAgentRuns: 50, WallClock: 24 * time.Hour, TokenBudget: 1_000_000, MaxStalled: -3, OwnerEvery: 2},
		Counters: domain.Counters{AgentRuns: 7, Tokens: 1234, WallUsed: 90 * time.Minute},
		Counts:   domain.CountsOf(map[domain.Status]int{domain.Pending: 2, domain.Running: 1, domain.Aborted: 4}), Running: "n9", Queued: map[string]string{"owner": "n3", "strategist": "n4"},
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
	var back domain.Quest
	if err := DecodeQuest(raw, &back); err != nil || !reflect.DeepEqual(&back, q) {
		t.Errorf("the schema 4 record reads back %v\n%#v", err, back)
	}
	// The same fields, now counted, then the fields added since schema 5
	// began, empty: one zero byte each.
	added := len(QuestCodec.Names()) - QuestFieldsV1
	want := "02" + hex.EncodeToString([]byte{byte(len(QuestCodec.Names()))}) + goldenQuestV1[2:] + strings.Repeat("00", added)
	if got := hex.EncodeToString(EncodeQuest(q)); got != want {
		t.Errorf("quest record\n%s\nwant\n%s", got, want)
	}
}

// A record written before a field was added reads with that field zero;
// one from a newer build, with more fields than the table, is an error.
func TestQuestRecordFieldCount(t *testing.T) {
	q := goldenQuest()
	raw := EncodeQuest(q)
	// The same record as a build whose table ended at Replays would have
	// written it: count 28, no Created and Updated.
	var fewer []byte
	fewer = append(fewer, QuestRecordV2, 28)
	cut, _ := hex.DecodeString(goldenQuestV1[2:])
	tail := 2 * len(encodeTimeForTest(q.Created))
	fewer = append(fewer, cut[:len(cut)-tail]...)
	var got domain.Quest
	if err := DecodeQuest(fewer, &got); err != nil {
		t.Fatalf("a record with fewer fields: %v", err)
	}
	want := *q
	want.Created, want.Updated = time.Time{}, time.Time{}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("a record with fewer fields reads back\n%#v\nwant\n%#v", got, want)
	}
	newer := append([]byte{QuestRecordV2, byte(len(QuestCodec.Names()) + 1)}, raw[2:]...)
	newer = append(newer, 0)
	if err := DecodeQuest(newer, new(domain.Quest)); err == nil || !strings.Contains(err.Error(), "newer") {
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
		var want domain.Quest
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		var got domain.Quest
		if err := DecodeQuest(EncodeQuest(q), &got); err != nil {
			t.Fatalf("decode: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("binary record reads back\n%#v\nJSON read back\n%#v", got, want)
		}
		var fromJSON domain.Quest
		if err := DecodeQuest(raw, &fromJSON); err != nil || !reflect.DeepEqual(fromJSON, want) {
			t.Fatalf("a JSON record through DecodeQuest: %v, %#v", err, fromJSON)
		}
	})
}

// A record cut short or with bytes past its end is an error, never a
// panic or a quest made up of what was there.
func TestQuestRecordDamageIsAnError(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		raw := EncodeQuest(genQuest(t))
		cut := rapid.IntRange(0, len(raw)-1).Draw(t, "cut")
		if err := DecodeQuest(raw[:cut], new(domain.Quest)); err == nil {
			t.Fatalf("a record cut at %d of %d bytes decoded", cut, len(raw))
		}
		if err := DecodeQuest(append(raw, 0), new(domain.Quest)); err == nil {
			t.Fatal("a record with a byte past its end decoded")
		}
	})
	rapid.Check(t, func(t *rapid.T) {
		_ = DecodeQuest(append([]byte{QuestRecordV1}, rapid.SliceOf(rapid.Byte()).Draw(t, "garbage")...), new(domain.Quest))
		_ = DecodeQuest(append([]byte{QuestRecordV2}, rapid.SliceOf(rapid.Byte()).Draw(t, "garbage")...), new(domain.Quest))
	})
}

// BenchmarkQuestRecord is one encode and one decode of a quest record,
// the tick's per-quest codec work.
func BenchmarkQuestRecord(b *testing.B) {
	q := &domain.Quest{ID: "q7", Name: "name", Direction: "find the way", Status: domain.QuestActive, Mode: domain.ModeTeam,
		Roles: []string{"scout", "owner"}, Provider: "demo", Gate: "default", Limits: domain.DefaultLimits(),
		Counters: domain.Counters{AgentRuns: 7, Tokens: 1234, WallUsed: 90 * time.Minute},
		Counts:   domain.CountsOf(map[domain.Status]int{domain.Pending: 2, domain.Running: 1, domain.Aborted: 4}), Running: "n9", Queued: map[string]string{"owner": "n3"},
		WallSession: 5, WallMark: time.Unix(1e9, 5).UTC(), DispatchSeq: 99, Created: time.Unix(1e9, 0).UTC(), Updated: time.Unix(1e9, 7).UTC()}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendQuest(buf[:0], q)
		var got domain.Quest
		if err := DecodeQuest(buf, &got); err != nil {
			b.Fatal(err)
		}
	}
}
