package engine

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/questbox/questbox/engine/agent"
)

// voter answers every council member at once: a reviewer with a dissent,
// a judge with a revise and no action, so that every round decides and
// the next owner turn comes at the next tick.
var voter = funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
	out := `{"confidence":0.5,"actions":[],"dissent":"not yet","notes":"weigh the evidence"}`
	if req.Role == RoleJudge {
		out = `{"confidence":0.5,"actions":[],"dissent":"","verdict_source":"revise","citations":[]}`
	}
	return agent.Reply{Output: []byte(out), Tokens: 1, TokensReported: true}, nil
})

// BenchmarkCouncilRound is one council round in every active quest (a
// council of 2 reviewers and 1 judge, all answering at once): the tick
// that opens each owner's design phase and dispatches its 3 members, the
// members' results recorded (group commit), and the tick that merges
// each council and applies its run phase. It reports the commits, syncs,
// bytes written and CPU of the whole round.
func BenchmarkCouncilRound(b *testing.B) {
	for _, active := range []int{10, 1000} {
		b.Run(fmt.Sprintf("active=%d", active), func(b *testing.B) {
			dir, err := os.MkdirTemp("", "qbcouncil")
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { os.RemoveAll(dir) })
			s, err := OpenStore(dir, StoreOptions{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			e, err := New(s, Options{Providers: map[string]Provider{"p": voter}, MaxParallel: 3 * active})
			if err != nil {
				b.Fatal(err)
			}
			spec := e.NewQuestSpec("bench", "bench")
			spec.Provider, spec.Roles = "p", []string{RoleScout, RolePOC, RoleOwner}
			spec.Limits.MaxAgentRuns, spec.Limits.TokenBudget, spec.Limits.WallClock = 1<<30, 1<<30, 1<<62
			spec.Limits.MaxStalled = 0
			e.SetCouncil(&spec, 2, 1, nil)
			err = e.update(func(t *txn) error {
				for i := range active {
					s := spec
					s.Direction = fmt.Sprintf("direction %d", i)
					q, err := t.newQuest(s)
					if err != nil {
						return err
					}
					// No worker: every tick is the owner's turn.
					root, err := t.Node(q.Queued[RoleOwner] + first(t.tx, bPending, q.ID))
					if err != nil {
						return err
					}
					if err := t.Abort(q, root, "bench"); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			m := &meter{s: s}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m.start()
				rep, err := e.Tick(ctx)
				if err != nil {
					b.Fatal(err)
				}
				e.Wait()
				if _, err := e.Tick(ctx); err != nil {
					b.Fatal(err)
				}
				m.stop()
				if len(rep.Dispatched) != 3*active {
					b.Fatalf("round %d dispatched %d members, want %d", i, len(rep.Dispatched), 3*active)
				}
			}
			b.StopTimer()
			m.report(b, "round")
		})
	}
}
