package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/questbox/questbox/engine/agent"
)

// The latency of follow-up work (chain.go), with agents that answer at
// once: what a chain costs beyond the agents' own time. Serve runs with a
// one-minute tick on a fake clock that never moves, so its tick never
// fires: each chain is started by a tick by hand (as `questbox tick`
// does through the daemon), and everything after that tick's dispatch is
// the follow-up passes' work. Engine.Wait, while Serve runs, returns once
// the chain is over.

// revisingStageAgent answers every stage at once: a plan, a deliverable
// whose verdict is dead (the Team locks as aborted and proposes nothing,
// so no owner turn comes between chains), and an accepter that rejects
// revision 0 back to the executer and accepts revision 1: five stages.
var revisingStageAgent = funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
	switch req.Stage {
	case StagePlan:
		return reply("1. look at the invoices\n2. count the exact matches"), nil
	case StageExec:
		return reply(answer("dead", fmt.Sprintf("the bench executer found nothing new on this branch (revision %d)", req.Revision))), nil
	}
	if req.Revision == 0 {
		return reply(`{"decision":"reject","reason":"count the matches again","revision_target":"executer"}`), nil
	}
	return reply(`{"decision":"accept","reason":"as planned","citations":[{"quote":"found nothing new"}]}`), nil
})

// serveForBench runs e.Serve with a one-minute tick on a fake clock that
// the benchmark never advances, until the benchmark ends.
func serveForBench(b *testing.B, e *Engine) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Serve(ctx, time.Minute, nil) }()
	e.clock.(interface{ BlockUntil(int) }).BlockUntil(1)
	b.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	})
}

// BenchmarkTeamChain is one Team with one revision, from its planner's
// dispatch (a tick) to its lock: planner, executer, accepter (reject),
// executer, accepter (accept), each dispatched by the commit of the one
// before. ns/op is the whole chain: the overhead beyond the agents'
// time, as they answer at once.
func BenchmarkTeamChain(b *testing.B) {
	s := mustOpenStore(b, b.TempDir())
	b.Cleanup(func() { s.Close() })
	e, err := New(s, Options{Clock: newFakeClock(), Providers: map[string]Provider{"p": revisingStageAgent}})
	if err != nil {
		b.Fatal(err)
	}
	spec := e.NewQuestSpec("bench", "bench the chain")
	spec.Provider, spec.Teams, spec.MaxRevisions, spec.AcceptMode = "p", true, DefaultMaxRevisions, AcceptJudge
	spec.Limits.MaxAgentRuns, spec.Limits.TokenBudget = 1<<30, 1<<30
	spec.Limits.WallClock, spec.Limits.MaxStalled = 1<<62, 0
	q, err := e.NewQuest(spec)
	if err != nil {
		b.Fatal(err)
	}
	chains(b, s, e, "chain", func(i int, rep TickReport) {
		if len(rep.Dispatched) != 1 {
			b.Fatalf("chain %d: the tick dispatched %v, want the planner", i, rep.Dispatched)
		}
		err := e.update(func(t *txn) error {
			q, err := t.Quest(q.ID)
			if err != nil {
				return err
			}
			if q.Counts.Get(Aborted) != i+1 || q.Counts.Get(Revising) != 0 || q.Counters.AgentRuns != 5*(i+1) {
				return fmt.Errorf("after chain %d: counts %v, %d agent runs; want %d Teams locked, none revising, 5 runs each", i, q.Counts, q.Counters.AgentRuns, i+1)
			}
			n, _, err := t.NewNode(q, nil, RoleScout, fmt.Sprintf("Team %d", i+1), Pending, "")
			if err != nil {
				return err
			}
			return t.OpenTeam(q, n)
		})
		if err != nil {
			b.Fatal(err)
		}
	})
}

// chains runs b.N chains on e, serving: each a tick by hand and what
// follows it, timed until Wait returns; check (timer stopped) checks
// chain i and readies the next. It reports the meter's figures per unit
// and the slowest chain.
func chains(b *testing.B, s *Store, e *Engine, unit string, check func(i int, rep TickReport)) {
	serveForBench(b, e)
	ctx := context.Background()
	m := &meter{s: s}
	var worst time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.start()
		t0 := time.Now()
		rep, err := e.Tick(ctx)
		if err != nil {
			b.Fatal(err)
		}
		e.Wait()
		worst = max(worst, time.Since(t0))
		m.stop()
		b.StopTimer()
		check(i, rep)
		b.StartTimer()
	}
	m.report(b, unit)
	b.ReportMetric(float64(worst.Microseconds())/1000, "worst-ms")
}

// BenchmarkCouncilChain is one council of 2 reviewers and a judge, from
// its seating (a tick: the owner's turn opens its design phase and
// dispatches what max_parallel allows, 2 of its 3 members) to its merge:
// the third member is dispatched once a slot frees, and the merge
// follows the last answer.
func BenchmarkCouncilChain(b *testing.B) {
	s := mustOpenStore(b, b.TempDir())
	b.Cleanup(func() { s.Close() })
	e, err := New(s, Options{Clock: newFakeClock(), Providers: map[string]Provider{"p": voter}, MaxParallel: 2})
	if err != nil {
		b.Fatal(err)
	}
	spec := e.NewQuestSpec("bench", "bench the council")
	spec.Provider, spec.Roles = "p", []string{RoleScout, RolePOC, RoleOwner}
	spec.Limits.MaxAgentRuns, spec.Limits.TokenBudget, spec.Limits.WallClock = 1<<30, 1<<30, 1<<62
	spec.Limits.MaxStalled = 0
	e.SetCouncil(&spec, 2, 1, nil)
	q, err := e.NewQuest(spec)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := e.AbortNode("n1", "bench: every tick is the owner's turn"); err != nil {
		b.Fatal(err)
	}
	chains(b, s, e, "council", func(i int, rep TickReport) {
		if len(rep.Dispatched) != 2 {
			b.Fatalf("council %d: the tick dispatched %v, want 2 members", i, rep.Dispatched)
		}
		got, err := e.Quest(q.ID)
		if err != nil {
			b.Fatal(err)
		}
		// The root, then one owner per council: each merged and locked.
		if got.Counts.Get(Explored) != 4*(i+1) || got.Counts.Get(CouncilPending) != 0 {
			b.Fatalf("after council %d: counts %v, want %d owners and their members explored, none sitting", i, got.Counts, i+1)
		}
	})
}
