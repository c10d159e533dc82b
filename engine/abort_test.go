package engine

import (
	"context"
	"testing"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/budget"
)

// A run whose node was aborted meanwhile still spent the provider's
// tokens: they count against the quest's token_budget. Until its agent
// is back, the run is charged its reservation (a dispatch meanwhile must
// count it); what the agent reports then replaces the charge.
func TestAbortedRunStillCountsItsTokens(t *testing.T) {
	started, release := make(chan string, 1), make(chan struct{})
	// The provider answers despite the cancellation, as a remote API that
	// already billed the request does.
	g := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		started <- req.Node
		<-release
		return reply(answer("dead", "too late: the node was aborted")), nil
	})
	h := newHarness(t, Options{Providers: map[string]Provider{"g": g}, MaxTokens: map[string]int{"g": 1000}})
	q := h.quest(func(s *QuestSpec) { s.Provider = "g"; s.Mode = ModeSolo })
	if _, err := h.e.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	node := <-started
	if got := reservedOf(t, h, q.ID); got != budget.PromptTokens+1000 {
		t.Fatalf("in flight: reserved %d, want %d", got, budget.PromptTokens+1000)
	}
	if _, err := h.e.AbortNode(node, ""); err != nil {
		t.Fatal(err)
	}
	if qq := h.questNow(q.ID); qq.Counters.Tokens != budget.PromptTokens+1000 || reservedOf(t, h, q.ID) != 0 {
		t.Fatalf("aborted, its agent not back yet: tokens %d, reserved %d; want the reservation charged", qq.Counters.Tokens, reservedOf(t, h, q.ID))
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

// An abort that lands after the tick committed a dispatch but before its
// run started: the agent is never asked, the run stays ended as aborted,
// charged nothing, and the quest is free for its next node.
func TestAbortBeforeTheRunStartsSkipsTheAgent(t *testing.T) {
	calls := 0
	g := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		calls++ // runs only after Tick returns; Wait orders it before the check
		return reply(answer("dead", "this agent should not have been asked")), nil
	})
	h := newHarness(t, Options{Providers: map[string]Provider{"g": g}})
	q := h.quest(func(s *QuestSpec) { s.Provider = "g"; s.Mode = ModeSolo })
	var aborted string
	h.e.startHook = func() {
		qq := h.questNow(q.ID)
		aborted = qq.Running
		if _, err := h.e.AbortNode(aborted, "changed my mind"); err != nil {
			t.Errorf("abort: %v", err)
		}
	}
	rep, err := h.e.Tick(context.Background())
	if err != nil || len(rep.Dispatched) != 1 || rep.Dispatched[0] != aborted {
		t.Fatalf("tick: %+v, %v; aborted %q", rep, err, aborted)
	}
	h.e.startHook = nil
	h.e.Wait()
	if calls != 0 {
		t.Errorf("the agent was asked %d times for an aborted node", calls)
	}
	n := h.node(aborted)
	runs, err := h.e.QuestRuns("", n.ID)
	if err != nil || len(runs) != 1 || runs[0].Outcome != "aborted" {
		t.Errorf("runs of the aborted node: %+v, %v, want one ended aborted", runs, err)
	}
	if n.Status != Aborted || h.questNow(q.ID).Running != "" {
		t.Errorf("node %s, quest running %q; want aborted and the quest free", n.Status, h.questNow(q.ID).Running)
	}
	if qq := h.questNow(q.ID); qq.Counters.Tokens != 0 || reservedOf(t, h, q.ID) != 0 {
		t.Errorf("tokens %d, reserved %d; a run that never started spends and holds nothing", qq.Counters.Tokens, reservedOf(t, h, q.ID))
	}
	if got := h.e.InFlight(); got != 0 {
		t.Errorf("in flight after the skipped start: %d", got)
	}
}
