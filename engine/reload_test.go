package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/gates"
)

// TestReconfigureAddsAProvider: a provider the options did not have is
// refused by NewQuest, and accepted once Reconfigure gives it.
func TestReconfigureAddsAProvider(t *testing.T) {
	good := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		return reply(answer("dead", "the new provider found nothing worth keeping")), nil
	})
	h := newHarness(t, Options{Providers: map[string]Provider{"old": good}})
	s := h.e.NewQuestSpec("new", "on the new provider")
	s.Provider = "new"
	if _, err := h.e.NewQuest(s); !errors.Is(err, ErrInvalid) {
		t.Fatalf("quest on provider new before the reload: %v, want ErrInvalid", err)
	}
	h.e.Reconfigure(Options{Providers: map[string]Provider{"old": good, "new": good}})
	q, err := h.e.NewQuest(s)
	if err != nil {
		t.Fatalf("quest on provider new after the reload: %v", err)
	}
	h.tick()
	if n := h.node("n1"); n.Status != Aborted {
		t.Errorf("the new provider's node: %s, want aborted by its dead verdict", n.Status)
	}
	if got := h.questNow(q.ID).Counters.AgentRuns; got != 1 {
		t.Errorf("agent runs %d, want 1", got)
	}
}

// TestARunFinishesOnTheOptionsItWasDispatchedWith: a reload that changes
// the gate while a run is in flight does not reach that run: its answer
// is judged by the gate it was dispatched under. The next run is judged
// by the new one.
func TestARunFinishesOnTheOptionsItWasDispatchedWith(t *testing.T) {
	started, release := make(chan struct{}, 1), make(chan struct{})
	slow := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		started <- struct{}{}
		<-release
		return reply(answer("dead", "the slow provider found nothing worth keeping")), nil
	})
	lenient := func(*Quest) (*gates.Catalog, error) {
		return gates.LoadCatalog([]gates.RuleSpec{{ID: "contract", Kind: gates.RuleContract, Level: "fail"}})
	}
	strict := func(*Quest) (*gates.Catalog, error) {
		return gates.LoadCatalog([]gates.RuleSpec{
			{ID: "contract", Kind: gates.RuleContract, Level: "fail"},
			{ID: "never", Kind: "regex", Level: "fail", Params: map[string]any{"field": "evidence", "pattern": "nothing", "mode": "must_not_match"}},
		})
	}
	h := newHarness(t, Options{Providers: map[string]Provider{"p": slow}, Catalog: lenient})
	q := h.quest(func(s *QuestSpec) { s.Provider, s.Mode = "p", ModeSolo })
	if _, err := h.e.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-started
	h.e.Reconfigure(Options{Providers: map[string]Provider{"p": slow}, Catalog: strict})
	close(release)
	h.e.Wait()
	if n := h.node("n1"); n.Status != Aborted || n.Outcome != "PASS" {
		t.Fatalf("the run in flight at the reload: %s, outcome %s; want judged by the gate it was dispatched under (PASS, aborted)", n.Status, n.Outcome)
	}
	// The dead end queued a strategist: its run is dispatched under the
	// new gate, which fails the same answer.
	if _, err := h.e.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-started
	h.e.Wait()
	ns, err := h.e.Nodes(q.ID)
	if err != nil {
		t.Fatal(err)
	}
	last := ns[len(ns)-1]
	if last.Role != RoleStrategist || last.Outcome != "FAIL" {
		t.Errorf("the run dispatched after the reload: %s outcome %s, want a strategist judged FAIL by the new gate", last.Role, last.Outcome)
	}
}
