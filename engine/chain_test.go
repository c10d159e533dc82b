package engine

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/domain"
)

// Follow-up work (chain.go): under Serve, what a commit enables is
// dispatched when it lands, not at the next tick. Each test steps the
// fake clock to one tick and checks what happened before the next.

// TestTeamStagesFollowEachOtherWithinATick: the demo Team (planner,
// executer, accepter rejecting, executer again, accepter accepting) is
// done one tick after its planner's dispatch; at a tick of a minute it
// took six.
func TestTeamStagesFollowEachOtherWithinATick(t *testing.T) {
	h := newHarness(t, Options{Providers: map[string]Provider{"demo": agent.Demo{}}})
	q := h.quest(func(s *QuestSpec) {
		s.Provider, s.Teams = "demo", true
		s.Direction = "find the most accurate free OCR for Japanese invoices"
	})
	d := h.serve()
	rep := d.step()
	if len(rep.Dispatched) != 1 {
		t.Fatalf("the first tick dispatched %v, want the planner alone", rep.Dispatched)
	}
	root := h.node("n1")
	if root.Status != Growing || root.RevisionCount != 1 {
		ns, _ := h.e.Nodes(q.ID)
		t.Fatalf("one tick after its planner: the Team is %s after %d revisions, want growing after 1\n%s", root.Status, root.RevisionCount, describeNodes(ns))
	}
	stages := map[string]int{}
	ns, err := h.e.Nodes(q.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ns {
		if n.Team == root.ID {
			stages[n.Stage]++
			if n.Status != Explored {
				t.Errorf("stage %s (%s) is %s, want explored", n.ID, n.Stage, n.Status)
			}
		}
	}
	if stages[StagePlan] != 1 || stages[StageExec] != 2 || stages[StageAccept] != 2 {
		t.Errorf("stages %v, want 1 plan, 2 exec, 2 accept", stages)
	}
	// Every stage after the planner was dispatched by a follow-up pass:
	// the one tick dispatched the planner only.
	evs, err := h.e.Events(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	dispatched := 0
	for _, ev := range evs {
		if ev.Kind == KindNode && ev.To == string(Running) && ev.Team == root.ID {
			dispatched++
		}
	}
	if dispatched != 5 {
		t.Errorf("%d stage dispatches, want 5", dispatched)
	}
}

// TestCouncilSitsAndDecidesWithinATick: a council of 2 reviewers and a
// judge with max_parallel 2: the tick seats it and dispatches two
// members, the third dispatches once a slot frees, and the merge follows
// the last answer, all before the next tick.
func TestCouncilSitsAndDecidesWithinATick(t *testing.T) {
	h := localHarness(t, Options{Providers: map[string]Provider{"p": voter}, MaxParallel: 2})
	q := councilOwnerQuest(h, 2, 1)
	d := h.serve()
	rep := d.step()
	if len(rep.Dispatched) != 2 {
		t.Fatalf("the tick dispatched %v, want two members (max_parallel 2)", rep.Dispatched)
	}
	ns, err := h.e.Nodes(q.ID)
	if err != nil {
		t.Fatal(err)
	}
	var owner *Node
	members := 0
	for _, n := range ns {
		switch {
		case n.Role == RoleOwner:
			owner = n
		case domain.IsMember(n.Role):
			members++
			if n.Status != Explored {
				t.Errorf("member %s is %s, want explored", n.ID, n.Status)
			}
		}
	}
	if owner == nil || owner.Status != Explored || owner.Phase != PhaseRun {
		t.Fatalf("one tick after the council sat: owner %+v, want explored in its run phase\n%s", owner, describeNodes(ns))
	}
	if members != 3 {
		t.Errorf("%d members, want 3", members)
	}
	if got := h.questNow(q.ID).Counters.AgentRuns; got != 3 {
		t.Errorf("agent runs %d, want 3 (one per member)", got)
	}
}

// councilOwnerQuest is a team quest with a council of reviewers and
// judges on provider p whose root is aborted: its first tick is the
// owner's turn.
func councilOwnerQuest(h *harness, reviewers, judges int) *Quest {
	h.t.Helper()
	q := h.quest(func(s *QuestSpec) {
		s.Provider, s.Roles = "p", []string{RoleScout, RolePOC, RoleOwner}
		s.Limits.MaxStalled = 0
		h.e.SetCouncil(s, reviewers, judges, nil)
	})
	if _, err := h.e.AbortNode("n1", "the test starts at the owner's turn"); err != nil {
		h.t.Fatal(err)
	}
	return q
}

// TestRetryAfterAFailFollowsAtOnce: a scout that fails twice and then
// passes runs three times in one tick; the nodes it proposes wait for
// the next (the v1/v2 pace: one new node per quest per tick).
func TestRetryAfterAFailFollowsAtOnce(t *testing.T) {
	var runs atomic.Int32
	p := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		switch n := runs.Add(1); {
		case n <= 2:
			return reply("not an answer"), nil
		case n == 3:
			return reply(answer("promising", "the scout found a lead worth a closer look", "a child hypothesis")), nil
		}
		return reply(answer("dead", "the child found nothing worth keeping here")), nil
	})
	h := newHarness(t, Options{Providers: map[string]Provider{"p": p}})
	q := h.quest(func(s *QuestSpec) { s.Provider, s.Mode = "p", ModeSolo })
	d := h.serve()
	d.step()
	root := h.node("n1")
	if root.Status != Growing || root.Tries != 2 {
		t.Fatalf("after one tick: root %s with %d tries used, want growing after 2 FAILs", root.Status, root.Tries)
	}
	if got := runs.Load(); got != 3 {
		t.Errorf("%d runs in the tick, want 3 (two retries followed at once)", got)
	}
	by := h.nodesByStatus(q.ID)
	if len(by[Pending]) != 1 {
		t.Errorf("nodes by status %v: want the child pending until the next tick", by)
	}
	d.step()
	if got := runs.Load(); got != 4 {
		t.Errorf("after the second tick: %d runs, want 4 (the child's)", got)
	}
}

// TestNoFollowUpOutsideServe: a tick by hand (`questbox tick`) dispatches
// what it picks and nothing follows; the next tick takes the next stage.
func TestNoFollowUpOutsideServe(t *testing.T) {
	h := newHarness(t, Options{Providers: map[string]Provider{"demo": agent.Demo{}}})
	h.quest(func(s *QuestSpec) { s.Provider, s.Teams = "demo", true })
	h.tick()
	ns, err := h.e.Nodes("q1")
	if err != nil {
		t.Fatal(err)
	}
	var pending []string
	for _, n := range ns {
		if n.Status == Pending {
			pending = append(pending, n.Stage)
		}
	}
	if strings.Join(pending, ",") != StageExec {
		t.Errorf("after one tick by hand: pending stages %v, want the executer alone", pending)
	}
}

// TestPhaseGateSitsOnceItsPhaseIsDone: the scout phase's one node
// answers, and the phase gate's council sits and decides in the same
// tick; the revision it spawns is new work, for the next tick.
func TestPhaseGateSitsOnceItsPhaseIsDone(t *testing.T) {
	scout := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		return reply(answer("dead", "the scout found nothing worth keeping here")), nil
	})
	h := localHarness(t, Options{Providers: map[string]Provider{"w": scout, "m": voter}, MaxParallel: 2})
	q := h.quest(func(s *QuestSpec) {
		s.Provider, s.Roles = "w", []string{RoleScout, RolePOC, RoleOwner}
		s.CouncilReviewers, s.CouncilJudges, s.PhaseGates = []string{"m"}, []string{"m"}, []string{RoleScout}
		s.Limits.MaxStalled = 0
	})
	d := h.serve()
	if rep := d.step(); strings.Join(rep.Dispatched, ",") != "n1" {
		t.Fatalf("the tick dispatched %v, want the scout n1", rep.Dispatched)
	}
	gs, _ := gatesOf(t, h, q.ID)
	if len(gs) != 1 || gs[0].Status != Explored || gs[0].Verdict != "revise" {
		ns, _ := h.e.Nodes(q.ID)
		t.Fatalf("one tick after the scout phase's work: gates\n%s want one, explored with verdict revise; nodes:\n%s", describeNodes(gs), describeNodes(ns))
	}
	var revision *Node
	ns, err := h.e.Nodes(q.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ns {
		if strings.HasPrefix(n.Hypothesis, "Revise after "+gs[0].ID) {
			revision = n
		}
	}
	if revision == nil || revision.Status != Pending {
		t.Fatalf("the gate's revision: got %+v, want a pending scout (new work waits for the tick)", revision)
	}
}

// TestFollowUpWaitsForAFreeSlot: a person rejects a Team's accept while
// the one slot (max_parallel 1) is another quest's: the revision's
// executer waits for that run to end, not for the next tick.
func TestFollowUpWaitsForAFreeSlot(t *testing.T) {
	stages := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		switch req.Stage {
		case StagePlan:
			return reply(teamPlan), nil
		case StageExec:
			return reply(execAnswer("conclusion", "engine A read 31 of 40 invoices exactly")), nil
		}
		return reply(acceptJSON("31 of 40")), nil
	})
	started, release := make(chan struct{}), make(chan struct{})
	blocker := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		close(started)
		<-release
		return reply(answer("dead", "the other quest found nothing worth keeping")), nil
	})
	h := localHarness(t, Options{Providers: map[string]Provider{"s": stages, "b": blocker}, MaxParallel: 1})
	team := h.quest(func(s *QuestSpec) { s.Provider, s.Teams, s.AcceptMode = "s", true, AcceptHuman })
	other := h.quest(func(s *QuestSpec) { s.Provider, s.Mode = "b", ModeSolo })
	d := h.serve()
	d.step() // the Team's stages, up to its accept waiting for the button
	ns, err := h.e.Nodes(team.ID)
	if err != nil {
		t.Fatal(err)
	}
	acc := ns[len(ns)-1]
	if acc.Stage != StageAccept || acc.Status != AwaitingConsent {
		t.Fatalf("after the first tick: %s %s last, want the accept awaiting consent\n%s", acc.Stage, acc.Status, describeNodes(ns))
	}
	// The second tick gives the slot to the other quest, whose run waits.
	h.clock.Advance(time.Minute)
	if r := <-d.ticks; strings.Join(r.rep.Dispatched, ",") != h.nodesByStatus(other.ID)[Running][0] {
		t.Fatalf("the second tick dispatched %v, want the other quest's node", r.rep.Dispatched)
	}
	<-started
	if err := h.e.Reject(acc.ID, button(t, acc.Claim.Hash)); err != nil {
		t.Fatal(err)
	}
	close(release)
	h.e.Wait()
	ns, err = h.e.Nodes(team.ID)
	if err != nil {
		t.Fatal(err)
	}
	last := ns[len(ns)-1]
	if last.Stage != StageAccept || last.Status != AwaitingConsent || last.RevisionCount != 1 {
		t.Fatalf("once the slot freed, before the third tick: %s %s revision %d last, want the revision's accept awaiting consent\n%s",
			last.Stage, last.Status, last.RevisionCount, describeNodes(ns))
	}
}
