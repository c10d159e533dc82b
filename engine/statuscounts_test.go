package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
)

// mapCounts is a record holding its counts as the map Quest.Counts was
// (store.Counts), and tallied as they are now.
type mapCounts struct{ m map[Status]int }

type talliedCounts struct{ c StatusCounts }

var (
	mapCodec     = store.NewCodec(2, store.Counts("Counts", func(r *mapCounts) *map[Status]int { return &r.m }, nil))
	talliedCodec = store.NewCodec(2, store.Tallied("Counts", func(r *talliedCounts) store.Tally { return &r.c }))
)

// genCounts draws counts as the engine keeps them: nil, or a map of known
// statuses to counts that are not zero (a move deletes a count it takes
// to zero).
func genCounts(t *rapid.T) map[Status]int {
	if rapid.Bool().Draw(t, "nil") {
		return nil
	}
	m := map[Status]int{}
	for _, s := range rapid.SliceOf(rapid.SampledFrom(Statuses)).Draw(t, "statuses") {
		m[s] = rapid.OneOf(rapid.IntRange(-1<<31, -1), rapid.IntRange(1, 1<<31-1)).Draw(t, "count")
	}
	return m
}

// The counts' record is the map's, byte for byte both ways, and marshals
// to the map's JSON: the store's records and every face's output stay as
// they were.
func TestStatusCountsAreTheMapsForm(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := genCounts(t)
		old := mapCodec.Append(nil, &mapCounts{m})
		c := talliedCounts{domain.CountsOf(m)}
		if got := talliedCodec.Append(nil, &c); !bytes.Equal(got, old) {
			t.Fatalf("counts %v encode as %x, the map as %x", m, got, old)
		}
		var back talliedCounts
		if err := talliedCodec.Decode(old, &back); err != nil {
			t.Fatal(err)
		}
		if back != c {
			t.Fatalf("the map's record %x reads as %v, want %v", old, back.c, c.c)
		}
		var cnt int
		for _, n := range m {
			cnt += n
		}
		if back.c.Total() != cnt || back.c.Len() != len(m)-boolInt(m == nil) {
			t.Fatalf("counts %v: total %d, len %d", back.c, back.c.Total(), back.c.Len())
		}
		want, _ := json.Marshal(m)
		got, err := json.Marshal(c.c)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("counts %v marshal as %s (%v), the map as %s", m, got, err, want)
		}
		var fromJSON StatusCounts
		if err := json.Unmarshal(want, &fromJSON); err != nil || fromJSON != c.c {
			t.Fatalf("the map's JSON %s reads as %v (%v), want %v", want, fromJSON, err, c.c)
		}
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// A status this questbox does not know, in a record or in JSON, is an
// error that names it, not a count dropped.
func TestStatusCountsRefuseAnUnknownStatus(t *testing.T) {
	raw := mapCodec.Append(nil, &mapCounts{map[Status]int{Pending: 1, "stuck": 2}})
	var c talliedCounts
	if err := talliedCodec.Decode(raw, &c); !errors.Is(err, store.ErrRecord) || !strings.Contains(err.Error(), `"stuck"`) {
		t.Errorf("a record counting status stuck: %v, want ErrRecord naming it", err)
	}
	var q Quest
	if err := json.Unmarshal([]byte(`{"counts":{"pending":1,"stuck":2}}`), &q); err == nil || !strings.Contains(err.Error(), `"stuck"`) {
		t.Errorf("JSON counting status stuck: %v, want an error naming it", err)
	}
}

// Every binary quest record of the golden stores encodes again byte for
// byte (the tickmem.QuestCache compares records' bytes), nil counts (0) and empty
// ones (1) alike, but for the fields added after it was written.
func TestGoldenQuestRecordsEncodeAgain(t *testing.T) {
	seen := 0
	for schema := 5; schema <= 9; schema++ {
		raw, err := os.ReadFile(filepath.Join("testdata", "golden", "schema"+strconv.Itoa(schema), "questbox.db"))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), StoreFile)
		if err := os.WriteFile(path, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		db, err := store.OpenBare(path, true, 0)
		if err != nil {
			t.Fatal(err)
		}
		err = db.View(func(tx *store.Tx) error {
			return tx.Quests().ForEach(func(k, v []byte) error {
				if v[0] != records.QuestRecordV2 {
					return nil
				}
				var q Quest
				if err := records.DecodeQuest(v, &q); err != nil {
					t.Errorf("schema %d: quest %s: %v", schema, k, err)
					return nil
				}
				// A record of fewer fields reads the ones added since as
				// zero, and writes them so (one byte each).
				fields := len(records.QuestCodec.Names())
				want := append([]byte{records.QuestRecordV2, byte(fields)}, v[2:]...)
				want = append(want, make([]byte, fields-int(v[1]))...)
				if got := records.EncodeQuest(&q); !bytes.Equal(got, want) {
					t.Errorf("schema %d: quest %s encodes again as\n%x\nwant\n%x", schema, k, got, want)
				}
				seen++
				return nil
			})
		})
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	if seen == 0 {
		t.Fatal("no binary quest record in the golden stores")
	}
}
