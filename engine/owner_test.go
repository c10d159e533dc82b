package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine/agent"
)

// An owner whose run never reached its provider goes deferred without
// counting a run. While the box stays offline with proposals waiting, the
// next tick must not pick that deferred owner again (its hypothesis carries
// the same round): doing so fails the whole tick for every quest.
func TestDeferredOwnerDoesNotWedgeTheTick(t *testing.T) {
	online := true
	p := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		if req.Role == RoleOwner {
			return agent.Reply{}, fmt.Errorf("openai provider: dial tcp: connection refused: %w", agent.ErrUnavailable)
		}
		return reply(answer("promising", "node "+req.Node+" looks promising indeed", "idea A", "idea B", "idea C")), nil
	})
	h := newHarness(t, Options{Providers: map[string]Provider{"p": p}, MaxParallel: 1, Online: func() bool { return online }})
	q := h.quest(func(s *QuestSpec) { s.Provider = "p"; s.Limits.OwnerEvery = 3 })
	h.tick() // root -> growing, three proposals
	online = false
	h.tick() // owner dispatched, provider unreachable: deferred
	by := h.nodesByStatus(q.ID)
	if len(by[Deferred]) != 1 || len(by[Proposed]) != 3 {
		t.Fatalf("after the owner's run: %v, want one deferred owner and three proposals", by)
	}
	owner := by[Deferred][0]
	for i := 0; i < 2; i++ {
		if _, err := h.e.Tick(context.Background()); err != nil {
			t.Fatalf("tick %d while offline: %v", i, err)
		}
		h.e.Wait()
		h.clock.Advance(60e9)
	}
	if n := h.node(owner); n.Status != Deferred {
		t.Errorf("deferred owner: got %s, want still deferred while offline", n.Status)
	}
	online = true
	h.tick()
	if n := h.node(owner); n.Status != Deferred || n.Tries != 0 {
		t.Errorf("owner after the network came back: got %s tries %d, want deferred again (provider still down), no try", n.Status, n.Tries)
	}
}

// Owner rounds are numbered by the owner turns the quest has had, not by
// its agent runs: an external agent in team mode that answered three
// workers and gets its first owner prompt reads "owner round 1".
func TestOwnerRoundsCountOwnerTurns(t *testing.T) {
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal; s.Limits.OwnerEvery = 3 })
	if _, err := h.e.Scan(q.ID, []string{"tesseract jpn", "PaddleOCR"}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	owner := func(round int, dirs ...string) {
		t.Helper()
		for {
			w, err := h.e.Next(q.ID)
			if err != nil || w == nil {
				t.Fatalf("next: %v, %v; want work", w, err)
			}
			if w.Role != RoleOwner {
				// A worker: answer it with new directions.
				if _, err := h.e.Submit(ctx, q.ID, w.Node, []byte(answer("promising", "node "+w.Node+" looks promising indeed", dirs...))); err != nil {
					t.Fatal(err)
				}
				dirs = nil
				h.tick()
				continue
			}
			want := fmt.Sprintf("(owner round %d)", round)
			if !strings.HasSuffix(w.Hypothesis, want) || !strings.Contains(w.Prompt, want) {
				t.Fatalf("owner node %s: hypothesis %q, want it to end %q", w.Node, w.Hypothesis, want)
			}
			var actions []string
			for _, id := range h.nodesByStatus(q.ID)[Proposed] {
				actions = append(actions, fmt.Sprintf(`{"action": "abort", "node": %q, "reason": "not now"}`, id))
			}
			ans := fmt.Sprintf("```json\n{\"evidence\": \"nothing here is worth promoting yet\", \"actions\": [%s]}\n```\n", strings.Join(actions, ", "))
			res, err := h.e.Submit(ctx, q.ID, w.Node, []byte(ans))
			if err != nil || res.Outcome != "PASS" {
				t.Fatalf("owner answer: %+v, %v; want PASS", res, err)
			}
			return
		}
	}
	owner(1, "idea A", "idea B", "idea C")
	owner(2, "idea D", "idea E", "idea F")
	if runs := h.questNow(q.ID).Counters.AgentRuns; runs < 4 {
		t.Fatalf("%d agent runs, want the rounds to be fewer than the runs", runs)
	}
}
