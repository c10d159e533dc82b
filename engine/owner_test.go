package engine

import (
	"context"
	"fmt"
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
