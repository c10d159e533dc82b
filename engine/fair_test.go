package engine

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine/agent"
)

// With fewer slots than quests, every quest with work is dispatched within
// ceil(quests / max_parallel) ticks, again and again: no quest starves
// because of its id.
func TestFairDispatchUnderMaxParallel(t *testing.T) {
	const quests, parallel, rounds = 7, 2, 6
	bound := (quests + parallel - 1) / parallel // 4 ticks
	// Every answer is promising with a new direction, so each quest always
	// has a pending node; runs end within the tick.
	p := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		return reply(answer("promising", "this looks promising for "+req.Node, "next after "+req.Node)), nil
	})
	h := newHarness(t, Options{Providers: map[string]Provider{"p": p}, MaxParallel: parallel})
	last := map[string]int{} // quest -> tick of its latest dispatch
	for i := 0; i < quests; i++ {
		q := h.quest(func(s *QuestSpec) {
			s.Provider, s.Mode, s.Name = "p", ModeSolo, fmt.Sprint("fair ", i)
			s.Limits.MaxAgentRuns = 1000
		})
		last[q.ID] = 0 // created before tick 1
	}
	ticks := rounds * bound
	for tick := 1; tick <= ticks; tick++ {
		rep := h.tick()
		if len(rep.Dispatched) != parallel {
			t.Fatalf("tick %d: dispatched %v, want %d (every quest has work)", tick, rep.Dispatched, parallel)
		}
		for _, id := range rep.Dispatched {
			last[h.node(id).Quest] = tick
		}
		for q, at := range last {
			if tick-at >= bound {
				t.Fatalf("tick %d: quest %s last dispatched at tick %d, want at most %d ticks apart", tick, q, at, bound)
			}
		}
	}
	for q := range last {
		if got := h.questNow(q).Counters.AgentRuns; got < ticks*parallel/quests {
			t.Errorf("quest %s ran %d times in %d ticks, want at least %d (a fair share)", q, got, ticks, ticks*parallel/quests)
		}
	}
}

// A quest created while others wait queues behind them: it does not jump
// ahead of quests that have waited longer.
func TestNewQuestQueuesBehindWaitingOnes(t *testing.T) {
	p := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		return reply(answer("promising", "this looks promising for "+req.Node, "next after "+req.Node)), nil
	})
	h := newHarness(t, Options{Providers: map[string]Provider{"p": p}, MaxParallel: 1})
	spec := func(s *QuestSpec) { s.Provider, s.Mode = "p", ModeSolo }
	a, b := h.quest(spec), h.quest(spec)
	if got := h.questOf(h.tick()); got != a.ID {
		t.Fatalf("tick 1 served %s, want %s (oldest)", got, a.ID)
	}
	c := h.quest(spec) // b has waited since before c existed
	if got := h.questOf(h.tick()); got != b.ID {
		t.Fatalf("tick 2 served %s, want %s (waited longest)", got, b.ID)
	}
	if got := h.questOf(h.tick()); got != a.ID {
		t.Fatalf("tick 3 served %s, want %s (dispatched before %s was created)", got, a.ID, c.ID)
	}
	if got := h.questOf(h.tick()); got != c.ID {
		t.Fatalf("tick 4 served %s, want %s", got, c.ID)
	}
}

// questOf returns the quest of a tick's only dispatch.
func (h *harness) questOf(rep TickReport) string {
	h.t.Helper()
	if len(rep.Dispatched) != 1 {
		h.t.Fatalf("dispatched %v, want exactly one", rep.Dispatched)
	}
	return h.node(rep.Dispatched[0]).Quest
}

// sortByDispatch gives exactly the order of a full sort by DispatchSeq and
// creation (compareQuestIDs), whatever the history of dispatches: the
// tick's order, a random part of it dispatched in that order (moved to
// the back), ticks where none dispatched (the order kept), ids of several
// lengths and a few that are not "q" and a number. The quests come in as
// the active index gives them, by id.
func TestSortByDispatchIsTheFullSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 8))
	sorted := 0 // ticks whose quests came in order already (no sort)
	for trial := 0; trial < 200; trial++ {
		n := 1 + rng.IntN(60)
		byID := make([]*Quest, n)
		for i := range byID {
			id := fmt.Sprint("q", 1+rng.IntN(3*n)*(1+rng.IntN(3)))
			if rng.IntN(10) == 0 {
				id = fmt.Sprint("x", rng.IntN(50))
			}
			byID[i] = &Quest{ID: fmt.Sprint(id, "-", i), DispatchSeq: uint64(rng.IntN(4))}
			if rng.IntN(2) == 0 {
				byID[i].ID = id // unique below: the suffix keeps duplicates apart
			}
		}
		slices.SortFunc(byID, func(a, b *Quest) int { return strings.Compare(a.ID, b.ID) })
		byID = slices.CompactFunc(byID, func(a, b *Quest) bool { return a.ID == b.ID })
		seq := uint64(10)
		for tick := 0; tick < 8; tick++ {
			in := slices.Clone(byID)
			want := slices.Clone(byID)
			slices.SortFunc(want, func(a, b *Quest) int {
				if c := cmp.Compare(a.DispatchSeq, b.DispatchSeq); c != 0 {
					return c
				}
				return compareQuestIDs(a.ID, b.ID)
			})
			got := slices.Clone(in)
			rank := sortByDispatch(got, nil)
			if !slices.Equal(got, want) {
				t.Fatalf("trial %d tick %d: order %v, the full sort's %v", trial, tick, questIDs(got), questIDs(want))
			}
			for i, q := range got {
				if in[rank[i]] != q {
					t.Fatalf("trial %d tick %d: rank %d of %s names %s", trial, tick, rank[i], q.ID, in[rank[i]].ID)
				}
			}
			if slices.Equal(in, want) {
				sorted++
			}
			// The tick: quests dispatch in its order, a random part of
			// them, none at all one tick in four.
			if rng.IntN(4) == 0 {
				continue
			}
			for _, q := range got {
				if rng.IntN(3) != 0 {
					seq++
					q.DispatchSeq = seq
				}
			}
		}
	}
	if sorted == 0 {
		t.Fatal("no tick had its quests in order already: the shortcut was never tried")
	}
}

func questIDs(qs []*Quest) []string {
	ids := make([]string, len(qs))
	for i, q := range qs {
		ids[i] = q.ID
	}
	return ids
}

// compareQuestIDs orders quest ids by creation ("q9" before "q10"),
// parsing both at each comparison: the reference sortByDispatch's keys
// (compareDispatchKeys) are checked against.
func compareQuestIDs(a, b string) int {
	na, ea := strconv.ParseUint(strings.TrimPrefix(a, "q"), 10, 64)
	nb, eb := strconv.ParseUint(strings.TrimPrefix(b, "q"), 10, 64)
	if ea != nil || eb != nil {
		return strings.Compare(a, b)
	}
	return cmp.Compare(na, nb)
}
