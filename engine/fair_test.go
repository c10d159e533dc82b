package engine

import (
	"context"
	"fmt"
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
