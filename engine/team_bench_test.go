package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/store"
)

// teamStageAgent answers every stage at once: a plan, a deliverable whose
// verdict is dead (the Team locks as aborted and proposes nothing, so no
// owner turn comes between cycles), and an accept quoting it.
var teamStageAgent = funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
	switch req.Stage {
	case StagePlan:
		return reply("1. look at the invoices\n2. count the exact matches"), nil
	case StageExec:
		return reply(answer("dead", "the bench executer found nothing new on this branch")), nil
	}
	return reply(`{"decision":"accept","reason":"as planned","citations":[{"quote":"found nothing new"}]}`), nil
})

// BenchmarkTeamCycle is one Team cycle in every active quest: three ticks
// (planner, executer, accepter), every stage answering at once, each
// answer judged and recorded, the Team locked by the accept. Between
// cycles (timer stopped) each quest gets a new Team, as an owner's spawn
// would give it. It reports, per cycle of all the quests, the commits,
// syncs, bytes written and CPU time, the ticks' commits included, and the
// CPU time of the three ticks themselves (process CPU while Tick runs: the
// runs it starts may already be answering on the other core).
func BenchmarkTeamCycle(b *testing.B) {
	for _, active := range []int{10, 1000} {
		b.Run(fmt.Sprintf("active=%d", active), func(b *testing.B) {
			s := mustOpenStore(b, b.TempDir())
			b.Cleanup(func() { s.Close() })
			e, err := New(s, Options{Providers: map[string]Provider{"p": teamStageAgent}, MaxParallel: active})
			if err != nil {
				b.Fatal(err)
			}
			spec := e.NewQuestSpec("bench", "bench")
			spec.Provider, spec.Teams, spec.MaxRevisions, spec.AcceptMode = "p", true, DefaultMaxRevisions, AcceptJudge
			spec.Limits.MaxAgentRuns, spec.Limits.TokenBudget = 1<<30, 1<<30
			spec.Limits.WallClock, spec.Limits.MaxStalled = 1<<62, 0
			var ids []string
			err = e.update(func(t *txn) error {
				for i := range active {
					s := spec
					s.Direction = fmt.Sprintf("direction %d", i)
					q, err := t.newQuest(s)
					if err != nil {
						return err
					}
					ids = append(ids, q.ID)
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			m := &meter{s: s}
			var tickCPU time.Duration // the three ticks' own work, runs excluded
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m.start()
				for stage := range 3 {
					c0 := cpuTime()
					rep, err := e.Tick(ctx)
					tickCPU += cpuTime() - c0
					if err != nil {
						b.Fatal(err)
					}
					e.Wait()
					if len(rep.Dispatched) != active {
						b.Fatalf("cycle %d, stage %d: dispatched %d, want %d", i, stage, len(rep.Dispatched), active)
					}
				}
				m.stop()
				b.StopTimer()
				err := e.update(func(t *txn) error {
					for _, id := range ids {
						q, err := t.Quest(id)
						if err != nil {
							return err
						}
						if q.Counts.Get(Aborted) != i+1 || q.Counts.Get(Revising) != 0 {
							return fmt.Errorf("quest %s after cycle %d: counts %v, want %d Teams locked and none revising", id, i, q.Counts, i+1)
						}
						n, _, err := t.NewNode(q, nil, RoleScout, fmt.Sprintf("Team %d of %s", i+1, id), Pending, "")
						if err != nil {
							return err
						}
						if err := t.OpenTeam(q, n); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			m.report(b, "cycle")
			b.ReportMetric(float64(tickCPU.Microseconds())/1000/float64(b.N), "tick-cpu-ms/cycle")
			b.ReportMetric(float64(active), "teams/cycle")
		})
	}
}

// BenchmarkOwnerPromptBlockedTeams builds the owner's prompt of a Teams
// quest whose one blocked Team locked first, below locked nodes (dead
// workers) locked after it: the tick builds an owner's prompt in its
// transaction, and the prompt lists the blocked Teams (ownerTeamFacts),
// which it finds by walking the quest's locked nodes newest first.
func BenchmarkOwnerPromptBlockedTeams(b *testing.B) {
	for _, locked := range []int{100, 10_000} {
		b.Run(fmt.Sprintf("locked=%d", locked), func(b *testing.B) {
			s := mustOpenStore(b, b.TempDir())
			b.Cleanup(func() { s.Close() })
			e, err := New(s, Options{Providers: map[string]Provider{"p": teamStageAgent}})
			if err != nil {
				b.Fatal(err)
			}
			spec := e.NewQuestSpec("bench", "bench")
			spec.Provider, spec.Teams, spec.MaxRevisions, spec.AcceptMode = "p", true, DefaultMaxRevisions, AcceptJudge
			spec.Limits.MaxAgentRuns, spec.Limits.TokenBudget = 1<<30, 1<<30
			var qid, planner string
			err = e.update(func(t *txn) error {
				q, err := t.newQuest(spec)
				if err != nil {
					return err
				}
				qid = q.ID
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			ns, err := e.Nodes(qid)
			if err != nil {
				b.Fatal(err)
			}
			for _, n := range ns {
				if n.Stage == StagePlan {
					planner = n.ID
				}
			}
			if planner == "" {
				b.Fatalf("quest %s has no planner", qid)
			}
			if _, err := e.AbortNode(planner, "wrong plan"); err != nil {
				b.Fatal(err)
			}
			for made := 0; made < locked; {
				err := e.update(func(t *txn) error {
					q, err := t.Quest(qid)
					if err != nil {
						return err
					}
					for j := 0; j < 5000 && made < locked; j++ {
						n, _, err := t.NewNode(q, nil, RoleScout, fmt.Sprintf("dead end %d", made), Pending, "")
						if err != nil {
							return err
						}
						if err := t.Abort(q, n, "bench"); err != nil {
							return err
						}
						made++
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			var q *Quest
			var owner *Node
			err = e.update(func(t *txn) error {
				if q, err = t.Quest(qid); err != nil {
					return err
				}
				owner, err = t.Node(q.Queued[RoleOwner])
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				var req agent.Request
				err := e.store.view(func(tx *store.Tx) error {
					var err error
					req, err = e.buildRequest(tx, nil, q, owner)
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
				if !strings.Contains(req.Prompt, "FAIL Team ") {
					b.Fatalf("the owner's prompt lists no blocked Team:\n%s", req.Prompt)
				}
			}
		})
	}
}
