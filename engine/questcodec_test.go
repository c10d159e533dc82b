package engine

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"pgregory.net/rapid"
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
		Project: str.Draw(t, "project"),
	}
	if rapid.Bool().Draw(t, "counts") {
		q.Counts = map[Status]int{}
		for _, k := range rapid.SliceOf(str).Draw(t, "count keys") {
			q.Counts[Status(k)] = n.Draw(t, "count")
		}
	}
	if rapid.Bool().Draw(t, "queued") {
		q.Queued = rapid.MapOf(str, str).Draw(t, "queued map")
	}
	return q
}

// The binary form reads back exactly what a JSON record read back: the
// engine sees no difference between a quest stored before schema 4 and
// after.
func TestQuestRecordReadsAsJSONDid(t *testing.T) {
	if n := reflect.TypeFor[Quest]().NumField(); n != 24 {
		t.Fatalf("Quest has %d fields; encodeQuest and decodeQuest write and read 24: add the new ones to both (and to genQuest)", n)
	}
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
		_ = decodeQuest(append([]byte{questRecordV2}, rapid.SliceOf(rapid.Byte()).Draw(t, "garbage")...), new(Quest))
	})
}

// A store of schema 3 (quest records in JSON) migrates to the binary form
// at the next writing open, and reads as it is in a read-only open.
func TestQuestRecordsMigrate(t *testing.T) {
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal; s.Checkpoints = []string{RoleScout} })
	want := h.questNow(q.ID)
	// Back to schema 3: the quest as JSON.
	err := h.store.db.Update(func(tx *bolt.Tx) error {
		raw, err := json.Marshal(want)
		if err != nil {
			return err
		}
		if err := tx.Bucket(bQuests).Put([]byte(q.ID), raw); err != nil {
			return err
		}
		return tx.Bucket(bMeta).Put(kSchema, u64(3))
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
	_ = h.store.view(func(tx *bolt.Tx) error { raw = append(raw, tx.Bucket(bQuests).Get([]byte(q.ID))...); return nil })
	if len(raw) == 0 || raw[0] != questRecordV2 {
		t.Errorf("after the upgrade the quest record starts with %q, want the binary form", raw[:1])
	}
	if got := h.questNow(q.ID); !reflect.DeepEqual(got, want) {
		t.Errorf("after the upgrade:\n%#v\nwant\n%#v", got, want)
	}
}

// A record written before quests had a project (V1) still reads, with no
// project.
func TestQuestRecordV1ReadsWithoutProject(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		q := genQuest(t)
		q.Project = ""
		raw := encodeQuest(q)
		v1 := append([]byte{questRecordV1}, raw[1:len(raw)-1]...) // without the empty project
		var got Quest
		if err := decodeQuest(v1, &got); err != nil {
			t.Fatalf("a V1 record: %v", err)
		}
		var want Quest
		if err := decodeQuest(raw, &want); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("a V1 record reads back\n%#v\nwant\n%#v (%v)", got, want, err)
		}
	})
}
