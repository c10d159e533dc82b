package tickmem

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/storetest"
)

// TestTickCopyOfACachedQuestIsItsOwn changes every map and appends to
// every slice of a tick's copy of a cached quest (whatever fields Quest
// has), but the maps that no code changes in place (the shared maps, QuestCache), which
// the copy shares with the cached quest rather than copies: the cached
// quest does not change. A map added to Quest is changed here, so it is
// copied, or named as shared.
func TestTickCopyOfACachedQuestIsItsOwn(t *testing.T) {
	shared := map[string]bool{"RoleProviders": true, "TeamAccept": true, "StallSigs": true, "StallCounts": true}
	var q domain.Quest
	storetest.FillEvery(&q)
	q.Status = domain.QuestActive
	raw := records.EncodeQuest(&q)
	var c QuestCache
	c.Put(q.ID, raw, &q)
	var copied domain.Quest
	if !c.Get(q.ID, raw, &copied, nil) {
		t.Fatal("the cache does not hand out the record it was given")
	}
	if c.Get(q.ID, append(bytes.Clone(raw[:len(raw)-1]), raw[len(raw)-1]^1), &domain.Quest{}, nil) {
		t.Fatal("the cache handed out a quest for a record that differs in a byte")
	}
	v := reflect.ValueOf(&copied).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Map:
			name := v.Type().Field(i).Name
			if f.IsNil() {
				t.Fatalf("fillEvery left map %s nil", name)
			}
			if shared[name] {
				// A busy tick's copies of these were a third of what
				// its copies held through its runs.
				if f.UnsafePointer() != reflect.ValueOf(c.m[q.ID].q).Elem().Field(i).UnsafePointer() {
					t.Errorf("map %s of a tick's copy is a copy, not the cached quest's", name)
				}
				continue
			}
			f.SetMapIndex(reflect.ValueOf("changed").Convert(f.Type().Key()), reflect.Zero(f.Type().Elem()))
		case reflect.Slice:
			if f.Len() != f.Cap() {
				t.Errorf("slice %s of a tick's copy has room past its end (%d of %d): an append would write into the cache's array", v.Type().Field(i).Name, f.Len(), f.Cap())
			}
			f.Set(reflect.Append(f, reflect.Zero(f.Type().Elem())))
		}
	}
	var want domain.Quest
	if err := records.DecodeQuest(raw, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*c.m[q.ID].q, want) {
		t.Fatalf("changing a tick's copy changed the cached quest:\n%#v\nwant\n%#v", *c.m[q.ID].q, want)
	}
}

// TestCachedCopyReadsAsTheRecord: what a write hands to the cache is
// what its record decodes to, also for the values the record form does
// not keep as they are in memory (a local time with a monotonic reading,
// empty lists and maps that read back as nil).
func TestCachedCopyReadsAsTheRecord(t *testing.T) {
	local := time.FixedZone("here", 3600)
	cases := map[string]func(q *domain.Quest){
		"every field set": func(q *domain.Quest) {},
		"a local time with a monotonic reading": func(q *domain.Quest) {
			q.Updated = time.Now().In(local)
			q.WallMark = time.Now()
		},
		"empty lists and maps": func(q *domain.Quest) {
			q.Roles, q.Checkpoints, q.Replays, q.Egress = []string{}, []string{}, []string{}, []string{}
			q.CouncilReviewers, q.CouncilJudges, q.PhaseGates = []string{}, []string{}, []string{}
			q.Counts, q.Queued, q.RoleProviders, q.TeamAccept = domain.CountsOf(map[domain.Status]int{}), map[string]string{}, map[string]string{}, map[string]string{}
			q.StallSigs, q.StallCounts = map[string]string{}, map[string]int{}
		},
		"nil lists and maps": func(q *domain.Quest) {
			q.Roles, q.Checkpoints, q.Replays, q.Egress = nil, nil, nil, nil
			q.CouncilReviewers, q.CouncilJudges, q.PhaseGates = nil, nil, nil
			q.Counts, q.Queued, q.RoleProviders, q.TeamAccept, q.StallSigs, q.StallCounts = domain.StatusCounts{}, nil, nil, nil, nil, nil
		},
		"zero times": func(q *domain.Quest) { q.Created, q.Updated, q.WallMark = time.Time{}, time.Time{}, time.Time{} },
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			var q domain.Quest
			storetest.FillEvery(&q)
			change(&q)
			var want domain.Quest
			if err := records.DecodeQuest(records.EncodeQuest(&q), &want); err != nil {
				t.Fatal(err)
			}
			if got := cachedCopy(&q); !reflect.DeepEqual(*got, want) {
				t.Fatalf("cachedCopy gives\n%#v\nthe record reads back\n%#v", *got, want)
			}
		})
	}
}
