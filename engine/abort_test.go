package engine

import (
	"context"
	"testing"

	"github.com/questbox/questbox/engine/agent"
)

// A run whose node was aborted meanwhile still spent the provider's
// tokens: they count against the quest's token_budget.
func TestAbortedRunStillCountsItsTokens(t *testing.T) {
	started, release := make(chan string, 1), make(chan struct{})
	// The provider answers despite the cancellation, as a remote API that
	// already billed the request does.
	g := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		started <- req.Node
		<-release
		return reply(answer("dead", "too late: the node was aborted")), nil
	})
	h := newHarness(t, Options{Providers: map[string]Provider{"g": g}})
	q := h.quest(func(s *QuestSpec) { s.Provider = "g"; s.Mode = ModeSolo })
	if _, err := h.e.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	node := <-started
	if _, err := h.e.AbortNode(node, ""); err != nil {
		t.Fatal(err)
	}
	close(release)
	h.e.Wait()
	qq := h.questNow(q.ID)
	if n := h.node(node); n.Status != Aborted {
		t.Fatalf("node: got %s, want aborted", n.Status)
	}
	if qq.Counters.Tokens != 10 {
		t.Errorf("tokens: got %d, want 10 (the discarded run's usage)", qq.Counters.Tokens)
	}
}
