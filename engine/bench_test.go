package engine

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/questbox/questbox/engine/agent"
)

// The tick benchmarks measure the tick's own work (loop control, bringing a
// deferred node back, one dispatch per quest, one commit) with every agent
// answering at once with "provider unreachable": the node goes deferred and
// the next tick brings it back, so the store is in the same state at every
// iteration. Agent time and the completions are outside the timer.

var (
	benchMu   sync.Mutex
	benchDirs = map[string]string{} // config -> seeded data dir, reused across b.N rounds
)

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range benchDirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

var unreachable = funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
	return agent.Reply{}, fmt.Errorf("bench: %w", agent.ErrUnavailable)
})

// held answers "unreachable" once the benchmark closes release, so that no
// completion commits while the tick is being measured.
type held struct {
	mu      sync.Mutex
	release chan struct{}
}

func (h *held) arm() chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.release = make(chan struct{})
	return h.release
}

func (h *held) Run(ctx context.Context, req agent.Request) (agent.Reply, error) {
	h.mu.Lock()
	c := h.release
	h.mu.Unlock()
	<-c
	return unreachable(ctx, req)
}

// benchStore returns a data dir with active quests, each with one pending
// node, and total nodes in all, the rest locked (aborted) inside the
// active quests and in finished quests.
func benchStore(b *testing.B, active, nodes int) string {
	key := fmt.Sprintf("%d/%d", active, nodes)
	benchMu.Lock()
	defer benchMu.Unlock()
	if d, ok := benchDirs[key]; ok {
		return d
	}
	dir, err := os.MkdirTemp("", "qbbench")
	if err != nil {
		b.Fatal(err)
	}
	s, err := OpenStore(dir, StoreOptions{})
	if err != nil {
		b.Fatal(err)
	}
	e, err := New(s, Options{Providers: map[string]Provider{"p": unreachable}})
	if err != nil {
		b.Fatal(err)
	}
	spec := e.NewQuestSpec("bench", "bench")
	spec.Provider, spec.Mode = "p", ModeSolo
	spec.Limits.MaxAgentRuns, spec.Limits.TokenBudget = 1<<30, 1<<30
	spec.Limits.WallClock = 1 << 62
	locked := nodes - active
	const batch = 5000
	made := 0
	for q := 0; made < locked || q < active; q++ {
		err := e.update(func(t *txn) error {
			s := spec
			s.Direction = fmt.Sprintf("direction %d", q)
			qq, err := t.newQuest(s)
			if err != nil {
				return err
			}
			per := locked / max(active, 1)
			if q >= active {
				per = batch
			}
			for j := 0; j < per && made < locked; j++ {
				n, _, err := t.newNode(qq, nil, RoleScout, fmt.Sprintf("locked %d of %s", j, qq.ID), Proposed, "")
				if err != nil {
					return err
				}
				if err := t.abort(qq, n, "bench"); err != nil {
					return err
				}
				made++
			}
			if q >= active {
				return t.setQuestStatus(qq, QuestDone, "bench")
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	// Seeding emitted an event per node; let the outbox settle to its
	// retention window as a long-running box's would be.
	for last := uint64(0); ; {
		if err := e.update(func(t *txn) error { _, err := t.pruneEvents(e.opt.EventRetention); return err }); err != nil {
			b.Fatal(err)
		}
		evs, _ := e.Events(0, 1)
		if len(evs) == 0 || evs[0].Seq == last {
			break
		}
		last = evs[0].Seq
	}
	s.Close()
	benchDirs[key] = dir
	return dir
}

func benchmarkTick(b *testing.B, active, nodes int) {
	dir := benchStore(b, active, nodes)
	s, err := OpenStore(dir, StoreOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	p := &held{}
	e, err := New(s, Options{Providers: map[string]Provider{"p": p}, MaxParallel: active})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	commits := uint64(0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		release := p.arm()
		before := s.Commits()
		rep, err := e.Tick(ctx)
		commits += s.Commits() - before
		if err != nil {
			b.Fatal(err)
		}
		if len(rep.Dispatched) != active {
			b.Fatalf("dispatched %d, want %d", len(rep.Dispatched), active)
		}
		b.StopTimer()
		close(release)
		e.Wait()
		b.StartTimer()
	}
	b.ReportMetric(float64(commits)/float64(b.N), "commits/tick")
}

func BenchmarkTick(b *testing.B) {
	for _, c := range []struct{ active, nodes int }{
		{10, 10_000}, {10, 100_000}, {1000, 10_000}, {1000, 100_000},
	} {
		b.Run(fmt.Sprintf("active=%d/nodes=%d", c.active, c.nodes), func(b *testing.B) { benchmarkTick(b, c.active, c.nodes) })
	}
}
