package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"pgregory.net/rapid"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/budget"
	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/store"
)

// budgetAgent answers every kind of run a quest makes (workers, owners,
// council members, Team stages), counts the runs it was asked for and
// reports tokens for each (tokens, or perRun's when set).
type budgetAgent struct {
	mu     sync.Mutex
	runs   int
	byRole map[string]int
	// tokens is what each run reports using.
	tokens int
	// perRun, when set, is what the run numbered n (from 1) reports.
	perRun func(n int) int
	// breakFirst are roles whose first run breaks the answer contract
	// (a FAIL try, so the node is tried again).
	breakFirst map[string]bool
}

func (a *budgetAgent) Run(ctx context.Context, req agent.Request) (agent.Reply, error) {
	a.mu.Lock()
	a.runs++
	n := a.runs
	if a.byRole == nil {
		a.byRole = map[string]int{}
	}
	a.byRole[req.Role]++
	first := a.byRole[req.Role] == 1
	tokens := a.tokens
	if a.perRun != nil {
		tokens = a.perRun(n)
	}
	broken := first && a.breakFirst[req.Role]
	a.mu.Unlock()
	out := budgetAnswer(req)
	if broken {
		out = "no answer this time"
	}
	return agent.Reply{Output: []byte(out), Tokens: tokens, TokensReported: true}, nil
}

func (a *budgetAgent) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.runs
}

// budgetAnswer is a good answer to req, for its kind of run.
func budgetAnswer(req agent.Request) string {
	switch {
	case req.Role == RoleReviewer:
		return `{"confidence":0.5,"actions":[],"dissent":"","notes":"nothing to add"}`
	case req.Role == RoleJudge:
		return `{"confidence":0.5,"actions":[],"dissent":"","verdict_source":"revise","citations":[]}`
	case req.Stage == StagePlan:
		return teamPlan
	case req.Stage == StageAccept:
		return rejectJSON("no comparison with engine B", "executer")
	case req.Role == RoleOwner:
		return `{"evidence":"the leads are weighed","actions":[]}`
	}
	return answer("promising", "the scout found two leads worth weighing", "alpha lead", "beta lead")
}

// budgetHarness is a harness whose every provider is a, and a quest on it.
func budgetHarness(t *testing.T, a *budgetAgent, opt Options, spec func(*QuestSpec)) (*harness, *Quest) {
	t.Helper()
	opt.Providers = map[string]Provider{"p": a}
	if opt.MaxParallel == 0 {
		opt.MaxParallel = 8
	}
	h := localHarness(t, opt)
	q := h.quest(func(s *QuestSpec) {
		s.Provider = "p"
		spec(s)
	})
	return h, q
}

// council5 gives s a council of two reviewers and three judges on p.
func council5(s *QuestSpec) {
	s.Mode, s.Roles = ModeTeam, []string{RoleScout, RolePOC, RoleOwner}
	s.CouncilReviewers, s.CouncilJudges = []string{"p", "p"}, []string{"p", "p", "p"}
}

// tickUntilEnd ticks until q is no longer active (at most n ticks).
func tickUntilEnd(h *harness, q string, n int) *Quest {
	h.t.Helper()
	for range n {
		if h.questNow(q).Status != QuestActive {
			break
		}
		h.tick()
	}
	return h.questNow(q)
}

// rolesOf counts q's nodes by role.
func rolesOf(t *testing.T, h *harness, q string) map[string]int {
	t.Helper()
	ns, err := h.e.Nodes(q)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, n := range ns {
		out[n.Role]++
	}
	return out
}

// --max-agent-runs N with a council of five never runs more than N
// agents: a council that does not fit in what is left is not seated (its
// members are never made) and the quest ends naming the budget; one that
// fits runs, and its votes decide before the quest ends.
func TestCouncilNeverExceedsMaxAgentRuns(t *testing.T) {
	for max := 1; max <= 7; max++ {
		t.Run(fmt.Sprint(max), func(t *testing.T) {
			a := &budgetAgent{tokens: 10}
			h, q := budgetHarness(t, a, Options{}, func(s *QuestSpec) { council5(s); s.Limits.MaxAgentRuns = max })
			qq := tickUntilEnd(h, q.ID, 12)
			if a.count() > max || qq.Counters.AgentRuns > max {
				t.Fatalf("%d agents ran, the quest counts %d; want at most %d", a.count(), qq.Counters.AgentRuns, max)
			}
			if qq.Status != QuestTerminated {
				t.Fatalf("quest %s %q, want terminated by a budget", qq.Status, qq.Reason)
			}
			members := rolesOf(t, h, q.ID)[RoleReviewer] + rolesOf(t, h, q.ID)[RoleJudge]
			switch {
			case max < 6:
				// The scout ran (max 1: only it); the council of five
				// does not fit in what is left.
				if want := fmt.Sprintf("max_agent_runs %d: 1 used, a council of 5 needs 5", max); max > 1 && qq.Reason != want {
					t.Errorf("reason %q, want %q", qq.Reason, want)
				}
				if members != 0 {
					t.Errorf("%d council members were made for a council that was not seated", members)
				}
			default:
				// The council of five sits once after the scout; a second
				// one (its owner added nothing) does not fit.
				if members != 5 || a.count() != 6 {
					t.Errorf("%d members, %d runs; want the council of 5 seated after the scout", members, a.count())
				}
				if want := fmt.Sprintf("max_agent_runs %d: 6 used, a council of 5 needs 5", max); max > 6 && qq.Reason != want {
					t.Errorf("reason %q, want %q", qq.Reason, want)
				}
				owner := ownerOf(t, h, q.ID)
				if owner.Status != Explored || !strings.Contains(owner.Evidence, "council:") {
					t.Errorf("owner %s %s %q: want decided by its council's votes", owner.ID, owner.Status, owner.Evidence)
				}
			}
		})
	}
}

// ownerOf is q's first owner node.
func ownerOf(t *testing.T, h *harness, q string) *Node {
	t.Helper()
	ns, err := h.e.Nodes(q)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ns {
		if n.Role == RoleOwner {
			return h.node(n.ID)
		}
	}
	t.Fatalf("quest %s has no owner node:\n%s", q, describeNodes(ns))
	return nil
}

// A council member tried again (its first answer broke the contract) is
// a dispatch like any other: past max_agent_runs it does not run; the
// member is aborted naming the budget, and the council decides with the
// votes it has.
func TestCouncilMemberRetryWithinMaxAgentRuns(t *testing.T) {
	a := &budgetAgent{tokens: 10, breakFirst: map[string]bool{RoleReviewer: true}}
	h, q := budgetHarness(t, a, Options{}, func(s *QuestSpec) { council5(s); s.Limits.MaxAgentRuns = 6 })
	qq := tickUntilEnd(h, q.ID, 12)
	if a.count() != 6 || qq.Counters.AgentRuns > 6 {
		t.Fatalf("%d agents ran, the quest counts %d; want 6", a.count(), qq.Counters.AgentRuns)
	}
	ns, err := h.e.Nodes(q.ID)
	if err != nil {
		t.Fatal(err)
	}
	aborted := 0
	for _, n := range ns {
		if n.Role == RoleReviewer && n.Status == Aborted {
			aborted++
			if want := "not run: max_agent_runs reached (6 of 6)"; n.Reason != want {
				t.Errorf("member %s aborted for %q, want it to say %q", n.ID, n.Reason, want)
			}
		}
	}
	if aborted != 1 {
		t.Errorf("%d reviewers aborted, want the one whose retry did not fit:\n%s", aborted, describeNodes(ns))
	}
	if owner := ownerOf(t, h, q.ID); owner.Status != Explored {
		t.Errorf("owner %s %s: want decided by the votes the council had", owner.ID, owner.Status)
	}
}

// A quest never passes its token budget by more than what its runs in
// flight used beyond their reservations: a dispatch whose reservation
// does not fit in what is left does not start, and the quest ends naming
// the token budget.
func TestTokenBudgetReservesBeforeTheRun(t *testing.T) {
	a := &budgetAgent{tokens: 1500}
	h, q := budgetHarness(t, a, Options{}, func(s *QuestSpec) { s.Mode = ModeSolo; s.Limits.TokenBudget = 5000 })
	qq := tickUntilEnd(h, q.ID, 8)
	if qq.Counters.Tokens > qq.Limits.TokenBudget {
		t.Fatalf("the quest used %d tokens of a budget of %d", qq.Counters.Tokens, qq.Limits.TokenBudget)
	}
	if a.count() != 1 || qq.Status != QuestTerminated || !strings.HasPrefix(qq.Reason, "token_budget 5000: 1500 used") {
		t.Fatalf("%d runs, quest %s %q; want one run, then terminated by the token budget", a.count(), qq.Status, qq.Reason)
	}
}

// Every kind of run is held to both budgets: a worker, a worker tried
// again, a Team stage, a council member (an owner's council is seated
// for all its members at once, or not at all) and a phase gate's
// council. Each case lets the first run go (1500 tokens) and refuses the
// next dispatch, of the kind it names; the quest ends saying which
// budget, what is used and what the dispatch needs.
func TestBudgetsHoldForEveryKindOfRun(t *testing.T) {
	gate := func(s *QuestSpec) {
		s.Mode, s.Roles = ModeTeam, []string{RoleScout, RolePOC, RoleOwner}
		s.CouncilReviewers, s.CouncilJudges, s.PhaseGates = []string{"p"}, []string{"p"}, []string{RoleScout}
	}
	kinds := []struct {
		kind  string
		spec  func(*QuestSpec)
		broke map[string]bool // roles whose first answer is broken
		// what the refused dispatch is, as the reasons name it, by
		// budget; seats: a council of that many.
		run   string
		seats int
	}{
		{kind: "worker", spec: func(s *QuestSpec) { s.Mode = ModeSolo }, run: "a run of n2 (poc) on p"},
		{kind: "retry", spec: func(s *QuestSpec) { s.Mode = ModeSolo }, broke: map[string]bool{RoleScout: true}, run: "a run of n1 (scout) on p"},
		{kind: "team stage", spec: func(s *QuestSpec) { s.Teams = true }, run: "a run of n3 (executer) on p"},
		{kind: "council member", spec: council5, seats: 5},
		{kind: "phase gate", spec: gate, seats: 2},
	}
	for _, k := range kinds {
		for _, limit := range []string{budget.MaxAgentRuns, budget.TokenBudget} {
			t.Run(k.kind+"/"+limit, func(t *testing.T) {
				a := &budgetAgent{tokens: 1500, breakFirst: k.broke}
				h, q := budgetHarness(t, a, Options{}, func(s *QuestSpec) {
					k.spec(s)
					s.Limits.MaxStalled = 0
					if limit == budget.MaxAgentRuns {
						s.Limits.MaxAgentRuns = max(k.seats, 1) // the first run, then one short
					} else {
						// Room for the first run's 1500 tokens, not for
						// the next dispatch's reservation.
						s.Limits.TokenBudget = 1500 + budget.RunTokens*max(k.seats, 1) - 1
					}
				})
				qq := tickUntilEnd(h, q.ID, 6)
				if a.count() != 1 || qq.Counters.AgentRuns > qq.Limits.MaxAgentRuns || qq.Counters.Tokens > qq.Limits.TokenBudget {
					t.Fatalf("%d runs, counters %+v, limits %+v; want the first run only, within both", a.count(), qq.Counters, qq.Limits)
				}
				var want string
				switch {
				case limit == budget.MaxAgentRuns && k.seats > 0:
					want = fmt.Sprintf("max_agent_runs %d: 1 used, a council of %d needs %d", k.seats, k.seats, k.seats)
				case limit == budget.MaxAgentRuns:
					want = "max_agent_runs reached (1 of 1)" // no room for any run: the tick says so first
				case k.seats > 0:
					want = fmt.Sprintf("token_budget %d: 1500 used and 0 reserved by runs in flight, a council of %d reserves %d",
						qq.Limits.TokenBudget, k.seats, k.seats*budget.RunTokens)
				default:
					want = fmt.Sprintf("token_budget %d: 1500 used and 0 reserved by runs in flight, %s reserves %d", qq.Limits.TokenBudget, k.run, budget.RunTokens)
				}
				if qq.Status != QuestTerminated || qq.Reason != want {
					t.Fatalf("quest %s %q, want terminated: %q", qq.Status, qq.Reason, want)
				}
				if k.seats > 0 {
					roles := rolesOf(t, h, q.ID)
					if n := roles[RoleReviewer] + roles[RoleJudge] + roles["scout_gate"]; n != 0 {
						t.Errorf("%d council nodes made for a council that could not sit", n)
					}
				}
			})
		}
	}
}

// reservedOf is what quest's runs in flight reserve, as a reader of the
// store sees it (the running index laid over the record).
func reservedOf(t *testing.T, h *harness, quest string) int {
	t.Helper()
	var n int
	err := h.store.view(func(tx *store.Tx) error {
		q, ok, err := getQuest(tx, quest)
		if err != nil || !ok {
			return errors.Join(err, ErrNotFound)
		}
		n = q.ReservedTokens
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A council's members in flight hold their reservations: a member whose
// fellow used more than it reserved waits while another is in flight (it
// may end under its reservation), then, nothing in flight, is aborted
// naming the token budget, and the council decides with the votes it
// has.
func TestInFlightReservationsHoldTheBudget(t *testing.T) {
	started, release := make(chan string, 3), make(chan int)
	p := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		if req.Role != RoleJudge {
			return agent.Reply{Output: []byte(budgetAnswer(req)), Tokens: 100, TokensReported: true}, nil
		}
		started <- req.Node
		tokens := <-release
		return agent.Reply{Output: []byte(budgetAnswer(req)), Tokens: tokens, TokensReported: true}, nil
	})
	h := localHarness(t, Options{Providers: map[string]Provider{"p": p}, MaxParallel: 2})
	tokenBudget := 100 + 3*budget.RunTokens // the scout's 100, and a council of three
	q := h.quest(func(s *QuestSpec) {
		s.Provider, s.Mode, s.Roles = "p", ModeTeam, []string{RoleScout, RolePOC, RoleOwner}
		s.CouncilJudges = []string{"p", "p", "p"}
		s.Limits.TokenBudget, s.Limits.MaxStalled = tokenBudget, 0
	})
	h.tick() // the scout
	sub := h.e.Subscribe(h.e.LastSeq())
	defer sub.Close()
	if rep, err := h.e.Tick(context.Background()); err != nil || len(rep.Dispatched) != 2 {
		t.Fatalf("the council's tick: %+v, %v; want two members dispatched (two slots)", rep, err)
	}
	<-started
	<-started
	if got := reservedOf(t, h, q.ID); got != 2*budget.RunTokens {
		t.Fatalf("two members in flight reserve %d, want %d", got, 2*budget.RunTokens)
	}
	release <- 9000 // one member uses more than it reserved
	waitEvent(t, sub, func(ev Event) bool { return ev.Kind == KindVerdict && ev.Role == RoleJudge })
	if got := reservedOf(t, h, q.ID); got != budget.RunTokens {
		t.Fatalf("one member in flight reserves %d, want %d", got, budget.RunTokens)
	}
	rep, err := h.e.Tick(context.Background())
	if err != nil || len(rep.Dispatched) != 0 {
		t.Fatalf("tick with a member in flight: %+v, %v; want the third member to wait", rep, err)
	}
	release <- 1000
	h.e.Wait()
	h.tick()
	var third *Node
	ns, err := h.e.Nodes(q.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ns {
		if n.Role == RoleJudge && len(n.Runs) == 0 {
			third = n
		}
	}
	want := fmt.Sprintf("not run: token_budget %d: 10100 used and 0 reserved by runs in flight, a run of %s (judge) on p reserves %d", tokenBudget, third.ID, budget.RunTokens)
	if third.Status != Aborted || third.Reason != want {
		t.Fatalf("third member %s %s %q, want aborted: %q", third.ID, third.Status, third.Reason, want)
	}
	qq := tickUntilEnd(h, q.ID, 4)
	if owner := ownerOf(t, h, q.ID); owner.Status != Explored {
		t.Errorf("owner %s %s, want decided by the two votes", owner.ID, owner.Status)
	}
	if qq.Counters.Tokens != 10100 || qq.Status != QuestTerminated || !strings.HasPrefix(qq.Reason, "token_budget") {
		t.Errorf("quest %s %q with %d tokens, want terminated by the token budget at 10100", qq.Status, qq.Reason, qq.Counters.Tokens)
	}
}

// A reservation lives in its run's running entry: every reader counts it
// while the run is in flight, a save of the quest does not fold it into
// the record, and a restart that finds the run interrupted charges it
// once (its agent may have spent it; nobody will say what) and never
// again. An entry written before runs reserved charges nothing.
func TestReservationAcrossRestarts(t *testing.T) {
	for _, c := range []struct {
		name    string
		reserve int
	}{{"reserved", 3000}, {"entry without a reservation", 0}} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, Options{})
			q := h.quest(func(s *QuestSpec) { s.Provider, s.Mode = ProviderExternal, ModeSolo })
			if _, err := h.e.Scan(q.ID, []string{"first idea", "second idea"}); err != nil {
				t.Fatal(err)
			}
			_, run := dispatchReserving(t, h, q.ID, c.reserve)
			if got := reservedOf(t, h, q.ID); got != c.reserve {
				t.Fatalf("in flight: reserved %d, want %d", got, c.reserve)
			}
			renameQuest(t, h, q.ID) // a save of the quest keeps it once
			if got := reservedOf(t, h, q.ID); got != c.reserve {
				t.Fatalf("after a save: reserved %d, want %d", got, c.reserve)
			}
			for i := range 2 {
				h.restart()
				qq := h.questNow(q.ID)
				if got := reservedOf(t, h, q.ID); got != 0 || qq.Counters.Tokens != c.reserve {
					t.Fatalf("restart %d: reserved %d, tokens %d; want 0 and the reservation charged once, %d", i+1, got, qq.Counters.Tokens, c.reserve)
				}
				r, err := h.e.FindRun(run)
				if err != nil || r.Outcome != "interrupted" || r.Tokens != c.reserve || r.Reserved != c.reserve {
					t.Fatalf("restart %d: run %+v, %v; want interrupted, charged and reserving %d", i+1, r, err, c.reserve)
				}
			}
		})
	}
}

// The overshoot bound, on random budgets and usage: a quest never counts
// more agent runs than max_agent_runs, never more tokens than its
// token_budget when every run keeps within its reservation, and
// otherwise passes it by at most what the runs of its last dispatch used
// beyond their reservations: one run's excess, at most one reservation
// for a run that uses at most twice its reservation, but for a council,
// whose members are dispatched together.
func TestTokenOvershootIsAtMostTheLastDispatchsExcess(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		seats := rapid.SampledFrom([]int{0, 0, 2, 3}).Draw(rt, "council seats")
		maxTokens := rapid.SampledFrom([]int{0, 500}).Draw(rt, "provider's max_tokens")
		reserve := budget.RunTokens
		if maxTokens > 0 {
			reserve = budget.PromptTokens + maxTokens
		}
		usage := rapid.SliceOfN(rapid.IntRange(0, 2*reserve), 1, 40).Draw(rt, "tokens of each run")
		a := &budgetAgent{perRun: func(n int) int { return usage[(n-1)%len(usage)] }}
		var (
			mu      sync.Mutex
			tick    int
			byTick  = map[int][]int{} // what the runs each tick dispatched used
			counted = funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
				rep, err := a.Run(ctx, req)
				mu.Lock()
				byTick[tick] = append(byTick[tick], rep.Tokens)
				mu.Unlock()
				return rep, err
			})
		)
		h := localHarness(t, Options{Providers: map[string]Provider{"p": counted}, MaxParallel: 4, MaxTokens: map[string]int{"p": maxTokens}})
		defer h.close()
		limits := Limits{MaxTries: 3, MaxAgentRuns: rapid.IntRange(0, 12).Draw(rt, "max_agent_runs"), WallClock: domain.DefaultLimits().WallClock,
			TokenBudget: rapid.IntRange(0, 8*reserve).Draw(rt, "token_budget"), OwnerEvery: 1}
		q := h.quest(func(s *QuestSpec) {
			s.Provider, s.Limits = "p", limits
			s.Mode = ModeSolo
			if seats > 0 {
				s.Mode, s.Roles = ModeTeam, []string{RoleScout, RolePOC, RoleOwner}
				s.CouncilJudges = slices.Repeat([]string{"p"}, seats)
			}
		})
		for tick = 0; tick < 30 && h.questNow(q.ID).Status == QuestActive; tick++ {
			h.tick()
		}
		qq := h.questNow(q.ID)
		if qq.Counters.AgentRuns > limits.MaxAgentRuns || a.count() > limits.MaxAgentRuns {
			rt.Fatalf("%d agents ran, the quest counts %d, max_agent_runs %d", a.count(), qq.Counters.AgentRuns, limits.MaxAgentRuns)
		}
		last, all := 0, 0 // the excess of the last dispatch's runs; of all runs
		for i := range tick {
			if len(byTick[i]) == 0 {
				continue
			}
			last = 0
			for _, used := range byTick[i] {
				last += max(0, used-reserve)
			}
			all += last
		}
		if over := qq.Counters.Tokens - limits.TokenBudget; over > last || (all == 0 && over > 0) {
			rt.Fatalf("%d tokens of a budget of %d: over by %d, the last dispatch's runs used %d beyond their reservations (runs by tick %v)",
				qq.Counters.Tokens, limits.TokenBudget, over, last, byTick)
		}
		if seats == 0 && qq.Counters.Tokens > limits.TokenBudget+reserve {
			rt.Fatalf("%d tokens of a budget of %d: over by more than one reservation (%d)", qq.Counters.Tokens, limits.TokenBudget, reserve)
		}
	})
}

// What a run reserves follows the provider's max_tokens in force: a
// reload (Reconfigure) that raises it makes the next dispatch reserve
// more.
func TestReservationFollowsAReload(t *testing.T) {
	a := &budgetAgent{tokens: 10}
	h, q := budgetHarness(t, a, Options{MaxTokens: map[string]int{"p": 500}}, func(s *QuestSpec) {
		s.Mode, s.Limits.TokenBudget = ModeSolo, budget.PromptTokens+800 // room for 500, not for 1000
	})
	opt := h.opt
	opt.MaxTokens = map[string]int{"p": 1000}
	h.e.Reconfigure(opt)
	h.tick()
	qq := h.questNow(q.ID)
	want := fmt.Sprintf("token_budget %d: 0 used and 0 reserved by runs in flight, a run of n1 (scout) on p reserves %d", budget.PromptTokens+800, budget.PromptTokens+1000)
	if a.count() != 0 || qq.Status != QuestTerminated || qq.Reason != want {
		t.Fatalf("%d runs, quest %s %q; want none, terminated: %q", a.count(), qq.Status, qq.Reason, want)
	}
}

// Follow-up work (chain.go) is held to the budgets as the tick's is: a
// retry or a phase gate's council that a commit enables but that does
// not fit is not dispatched by the follow-up pass, which ends no quest;
// the next tick ends it, naming the budget.
func TestFollowUpWorkWithinBudgets(t *testing.T) {
	for _, c := range []struct {
		kind string
		spec func(*QuestSpec)
		// breakScout: the scout's first answer fails, so a retry follows.
		breakScout bool
		want       string
	}{
		{"retry", func(s *QuestSpec) { s.Mode, s.Limits.TokenBudget = ModeSolo, 1500+budget.RunTokens-1 }, true,
			fmt.Sprintf("token_budget %d: 1500 used and 0 reserved by runs in flight, a run of n1 (scout) on p reserves %d", 1500+budget.RunTokens-1, budget.RunTokens)},
		{"phase gate", func(s *QuestSpec) {
			s.Mode, s.Roles = ModeTeam, []string{RoleScout, RolePOC, RoleOwner}
			s.CouncilReviewers, s.CouncilJudges, s.PhaseGates = []string{"p"}, []string{"p"}, []string{RoleScout}
			s.Limits.MaxAgentRuns = 2
		}, false, "max_agent_runs 2: 1 used, a council of 2 needs 2"},
	} {
		t.Run(c.kind, func(t *testing.T) {
			a := &budgetAgent{tokens: 1500}
			if c.breakScout {
				a.breakFirst = map[string]bool{RoleScout: true}
			}
			h, q := budgetHarness(t, a, Options{}, func(s *QuestSpec) { c.spec(s); s.Limits.MaxStalled = 0 })
			d := h.serve()
			d.step()
			if qq := h.questNow(q.ID); a.count() != 1 || qq.Status != QuestActive {
				t.Fatalf("after the first tick and its follow-ups: %d runs, quest %s %q; want 1 run, still active", a.count(), qq.Status, qq.Reason)
			}
			d.step()
			if qq := h.questNow(q.ID); a.count() != 1 || qq.Status != QuestTerminated || qq.Reason != c.want {
				t.Fatalf("after the second tick: %d runs, quest %s %q; want 1 run, terminated: %q", a.count(), qq.Status, qq.Reason, c.want)
			}
		})
	}
}
