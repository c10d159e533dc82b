package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/questbox/questbox/engine/agent"
)

// The tick benchmarks measure the tick's own work (loop control, one
// dispatch per active quest, the events, one commit) at any -benchtime:
// after each measured tick, with the timer stopped, every agent answers
// "unreachable", and a reset transaction puts the deferred nodes back to
// pending and trims what the cycle added to them (a run id, an attempt),
// so every iteration dispatches the same nodes from the same state.
//
// BenchmarkCycle measures the whole cycle instead: the tick and every
// result coming back and being judged and recorded, with the commits and
// syncs it costs.

var (
	benchMu   sync.Mutex
	benchDirs = map[string]string{} // config -> seeded data dir, reused across b.N rounds
)

func TestMain(m *testing.M) {
	removeDeadBenchDirs()
	code := m.Run()
	for _, d := range benchDirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

// benchPrefix names a benchmark's seeded data dirs by the process that
// made them: one killed (an interrupted benchmark, a timeout) cannot
// remove its own, hundreds of megabytes each, so the next run removes
// those of processes that are gone.
var benchPrefix = fmt.Sprintf("qbbench-%d-", os.Getpid())

func removeDeadBenchDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "qbbench-*-*"))
	for _, d := range dirs {
		var pid int
		if _, err := fmt.Sscanf(filepath.Base(d), "qbbench-%d-", &pid); err != nil || pid == os.Getpid() {
			continue
		}
		if p, err := os.FindProcess(pid); err != nil || errors.Is(p.Signal(syscall.Signal(0)), os.ErrProcessDone) {
			os.RemoveAll(d)
		}
	}
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

// Quests of a mixed store (benchStoreMix): of every four active quests,
// two are solo, one runs Teams and one has a council sitting.
const (
	mixTeams   = 2 // i % 4
	mixCouncil = 3
)

// mixDispatches is what a tick of a mixed store of active quests
// dispatches: a node per solo quest, a planner per Teams quest, the three
// members of every council.
func mixDispatches(active int) int {
	n := 0
	for i := range active {
		if i%4 == mixCouncil {
			n += 3
		} else {
			n++
		}
	}
	return n
}

// benchStoreMix returns a data dir with active quests, each with one
// pending node, and nodes nodes in all, the rest locked (aborted) inside
// the active quests and in finished quests; with mix set, half the active
// quests run councils or Teams: each fourth quest is a team quest with Teams whose
// root Team has its planner pending, and each fourth a team quest whose
// owner's council (2 reviewers, 1 judge) sits with its members pending.
func benchStoreMix(b *testing.B, active, nodes int, mix bool) string {
	key := fmt.Sprintf("%d/%d/%v", active, nodes, mix)
	benchMu.Lock()
	defer benchMu.Unlock()
	if d, ok := benchDirs[key]; ok {
		return d
	}
	dir, err := os.MkdirTemp("", benchPrefix)
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
	specs := benchMixSpecs(e)
	locked := nodes - active
	made := 0
	for q := 0; made < locked || q < active; q++ {
		s := specs.of(q, active, mix)
		s.Direction = fmt.Sprintf("direction %d", q)
		err := e.update(func(t *txn) error {
			n, err := seedBenchQuest(t, s, q, active, locked-made, locked)
			made += n
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	settleBenchOutbox(b, e)
	s.Close()
	benchDirs[key] = dir
	return dir
}

// benchMix are the quests of benchStoreMix: solo ones, and with mix those
// with Teams and those with a council.
type benchMix struct{ solo, teams, council QuestSpec }

func benchMixSpecs(e *Engine) benchMix {
	spec := e.NewQuestSpec("bench", "bench")
	spec.Provider, spec.Mode = "p", ModeSolo
	spec.Limits.MaxAgentRuns, spec.Limits.TokenBudget = 1<<30, 1<<30
	spec.Limits.WallClock = 1 << 62
	spec.Limits.MaxTries, spec.Limits.MaxStalled = 1<<30, 0 // the cycle FAILs forever
	teams, council := spec, spec
	teams.Mode, teams.Teams, teams.MaxRevisions, teams.AcceptMode = ModeTeam, true, DefaultMaxRevisions, AcceptJudge
	council.Mode, council.Roles = ModeTeam, []string{RoleScout, RolePOC, RoleOwner}
	e.SetCouncil(&council, 2, 1, nil)
	return benchMix{spec, teams, council}
}

// of is the spec of quest q of the store, of which the first active are
// active.
func (m benchMix) of(q, active int, mix bool) QuestSpec {
	switch {
	case mix && q < active && q%4 == mixTeams:
		return m.teams
	case mix && q < active && q%4 == mixCouncil:
		return m.council
	}
	return m.solo
}

// seedBenchQuest makes quest q of benchStoreMix in t: an active one (q <
// active) with its share of the locked nodes, or a done one holding up
// to a batch of them; at most left in all. It returns how many locked
// nodes it made.
func seedBenchQuest(t *txn, s QuestSpec, q, active, left, locked int) (made int, _ error) {
	const batch = 5000
	qq, err := t.newQuest(s)
	if err != nil {
		return 0, err
	}
	if s.Mode == ModeTeam && !s.Teams {
		if err := t.sitCouncil(qq); err != nil {
			return 0, err
		}
	}
	per := locked / max(active, 1)
	if q >= active {
		per = batch
	}
	for j := 0; j < per && made < left; j++ {
		n, _, err := t.NewNode(qq, nil, RoleScout, fmt.Sprintf("locked %d of %s", j, qq.ID), Proposed, "")
		if err != nil {
			return made, err
		}
		if err := t.Abort(qq, n, "bench"); err != nil {
			return made, err
		}
		made++
	}
	if q >= active {
		return made, t.SetQuestStatus(qq, QuestDone, "bench")
	}
	return made, nil
}

// settleBenchOutbox prunes the events seeding emitted (one per node) to
// the retention window, as a long-running box's outbox would be.
func settleBenchOutbox(b *testing.B, e *Engine) {
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
}

// benchReset puts every deferred node of the active quests back to pending
// and trims each active quest's nodes to their state at seeding (no runs kept
// but the last, no attempts, no deferrals): the next tick finds the store as
// the previous one did. It runs with the timer stopped. It prunes no event:
// as a daemon's tick, the measured tick prunes what the cycle before it wrote
// past the retention window — its own group, the results' records (one per
// group commit, see sharedGroup) and the reset's group (the seeded outbox
// starts at the window).
func benchReset(b *testing.B, e *Engine) {
	b.Helper()
	err := e.update(func(t *txn) error {
		qs, err := t.activeQuests()
		if err != nil {
			return err
		}
		for _, q := range qs {
			var ids []string
			for _, idx := range [][]byte{bDeferred, bPending} {
				if sb := subRO(t.tx, idx, q.ID); sb != nil {
					_ = sb.ForEach(func(_, v []byte) error { ids = append(ids, string(v)); return nil })
				}
			}
			for _, id := range ids {
				n, err := t.Node(id)
				if err != nil {
					return err
				}
				n.Deferrals, n.Attempts, n.Tries, n.Claim = 0, nil, 0, nil
				n.Outcome, n.Facts, n.Feedback, n.ClaimHash = "", nil, "", ""
				if len(n.Runs) > 1 {
					n.Runs = n.Runs[len(n.Runs)-1:]
				}
				if n.Status == Deferred {
					if err := t.Move(q, n, Pending, "bench reset"); err != nil {
						return err
					}
				} else if err := t.SaveNode(n); err != nil {
					return err
				}
			}
			q.Replays = nil
			t.Track(q)
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

// benchEngine opens the seeded store of the configuration with provider
// p and one slot per active quest.
func benchEngine(b *testing.B, active, nodes int, p Provider) (*Store, *Engine) {
	return benchEngineSlots(b, active, nodes, active, p)
}

// benchEngineSlots is benchEngine with MaxParallel slots.
func benchEngineSlots(b *testing.B, active, nodes, slots int, p Provider) (*Store, *Engine) {
	return benchEngineMix(b, active, nodes, slots, false, p)
}

// benchEngineMix is benchEngineSlots on a mixed store (benchStoreMix) when
// mix is set.
func benchEngineMix(b *testing.B, active, nodes, slots int, mix bool, p Provider) (*Store, *Engine) {
	dir := benchStoreMix(b, active, nodes, mix)
	// Opened as the daemon opens it: a store left with many free pages
	// by seeding and pruning is compacted once (compact.go).
	s, err := OpenStore(dir, StoreOptions{Compact: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	e, err := New(s, Options{Providers: map[string]Provider{"p": p}, MaxParallel: slots})
	if err != nil {
		b.Fatal(err)
	}
	benchReset(b, e)
	return s, e
}

// written is what the store's commits wrote so far: the pages each
// allocated (bbolt writes every dirty page to a new one), and a meta page
// each. It is deterministic, unlike the time a commit takes.
func written(s *Store) int64 {
	return s.db.PagesAllocated() + int64(s.Commits())*int64(s.db.PageSize())
}

// meter sums what the store did between start and stop over a
// benchmark's iterations: CPU time, bytes written, commits and syncs.
type meter struct {
	s              *Store
	cpu            time.Duration
	wrote          int64
	commits, syncs uint64
	faults         int64
	t0             time.Duration
	w0, f0         int64
	c0, s0         uint64
}

func (m *meter) start() {
	m.f0 = minorFaults()
	m.c0, m.s0, m.t0, m.w0 = m.s.Commits(), m.s.Syncs(), cpuTime(), written(m.s)
}

func (m *meter) stop() {
	m.cpu += cpuTime() - m.t0
	m.faults += minorFaults() - m.f0
	m.wrote += written(m.s) - m.w0
	m.commits += m.s.Commits() - m.c0
	m.syncs += m.s.Syncs() - m.s0
}

// report reports the sums per iteration, per unit ("tick", "cycle").
func (m *meter) report(b *testing.B, unit string) {
	n := float64(b.N)
	b.ReportMetric(float64(m.cpu.Microseconds())/1000/n, "cpu-ms/"+unit)
	b.ReportMetric(float64(m.wrote)/1024/n, "KiB-written/"+unit)
	b.ReportMetric(float64(m.commits)/n, "commits/"+unit)
	b.ReportMetric(float64(m.syncs)/n, "syncs/"+unit)
	b.ReportMetric(float64(m.faults)/n, "faults/"+unit)
}

// gcShare settles the heap before a measured tick (a forced collection)
// and learns from it what the collector spends per byte allocated in
// steady state: at GOGC=100 a cycle starts once the program has
// allocated about its live heap again, and costs about what a forced
// cycle of that heap costs (marking what lives, sweeping the spans).
// So a byte allocated costs the forced cycle's CPU over the live heap,
// and a tick that allocates B bytes is charged B times that (cost).
type gcShare struct {
	cpu  time.Duration // CPU of the forced cycles
	live uint64        // live heap after them, summed
	n    int
}

func (g *gcShare) settle() {
	c := cpuTime()
	runtime.GC()
	g.cpu += cpuTime() - c
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	g.live += ms.HeapAlloc
	g.n++
}

// cost is the collector's CPU, in ms, for bytes allocated.
func (g *gcShare) cost(bytes float64) float64 {
	if g.live == 0 {
		return 0
	}
	perByte := float64(g.cpu.Nanoseconds()) / float64(g.live) // ns per byte
	return bytes * perByte / 1e6
}

func benchmarkTick(b *testing.B, active, nodes, slots int) {
	benchmarkTickMix(b, active, nodes, slots, false, false)
}

// benchmarkTickMix measures the tick on a mixed store (benchStoreMix)
// when mix is set; with released, each tick starts with the store's
// mapped pages released (BenchmarkTickReleased).
func benchmarkTickMix(b *testing.B, active, nodes, slots int, mix, released bool) {
	p := &held{}
	s, e := benchEngineMix(b, active, nodes, slots, mix, p)
	ctx := context.Background()
	m := &meter{s: s}
	// The transaction's share: the process's CPU from the tick's start to
	// its commit, before any run starts (startHook), when nothing but the
	// tick (and the collector) runs; and what it allocated, which unlike
	// allocs/op leaves out what the started runs allocate before the
	// timer stops (as much as the scheduler lets them). Reading the
	// allocations stops the world; the meter leaves that time out.
	var (
		txnCPU, t0            time.Duration
		txnAllocs, txnBytes   uint64
		mallocs0, allocBytes0 uint64
		ms                    runtime.MemStats
	)
	e.startHook = func() {
		c := cpuTime()
		txnCPU += c - t0
		runtime.ReadMemStats(&ms)
		txnAllocs += ms.Mallocs - mallocs0
		txnBytes += ms.TotalAlloc - allocBytes0
		m.t0 += cpuTime() - c
	}
	// Each tick starts on a settled heap, as a daemon's does a minute
	// after the last cycle: benchReset's garbage (it rewrites every
	// pending node, megabytes of it) is collected before the timer
	// starts, so that the collector's work on it does not land in the
	// tick's window. The tick's own garbage is then charged by what the
	// collector would spend on it in steady state (gcShare).
	var gc gcShare
	gc.settle()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		release := p.arm()
		runtime.ReadMemStats(&ms)
		mallocs0, allocBytes0 = ms.Mallocs, ms.TotalAlloc
		m.start()
		t0 = m.t0
		rep, err := e.Tick(ctx)
		m.stop()
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if len(rep.Dispatched) != slots {
			b.Fatalf("iteration %d dispatched %d, want %d", i, len(rep.Dispatched), slots)
		}
		close(release)
		e.Wait()
		benchReset(b, e)
		gc.settle()
		if released {
			if err := s.db.ReleaseMapped(); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
	}
	m.report(b, "tick")
	tickCPU := float64(m.cpu.Microseconds()) / 1000 / float64(b.N)
	gcMS := gc.cost(float64(txnBytes) / float64(b.N))
	b.ReportMetric(gcMS, "gc-ms/tick")
	b.ReportMetric(float64(gc.live)/float64(gc.n)/(1<<20), "live-MiB")
	b.ReportMetric(float64(gc.cpu.Microseconds())/1000/float64(gc.n), "gc-cycle-ms")
	b.ReportMetric(tickCPU+gcMS, "tick+gc-ms/tick")
	b.ReportMetric(float64(txnCPU.Microseconds())/1000/float64(b.N), "txn-cpu-ms/tick")
	b.ReportMetric(float64(txnAllocs)/float64(b.N), "txn-allocs/tick")
	b.ReportMetric(float64(txnBytes)/float64(b.N), "txn-B/tick")
	b.ReportMetric(float64(slots), "dispatched/tick")
}

func BenchmarkTick(b *testing.B) {
	for _, c := range benchConfigs {
		b.Run(fmt.Sprintf("active=%d/nodes=%d", c.active, c.nodes), func(b *testing.B) { benchmarkTick(b, c.active, c.nodes, c.active) })
	}
}

// BenchmarkTickMixed is BenchmarkTick with half the active quests running
// councils or Teams (benchStoreMix): at 1,000 active quests a tick
// dispatches 500 workers, 250 planners and the 750 members of 250
// councils, every slot free.
func BenchmarkTickMixed(b *testing.B) {
	for _, c := range benchConfigs {
		slots := mixDispatches(c.active)
		b.Run(fmt.Sprintf("active=%d/nodes=%d", c.active, c.nodes), func(b *testing.B) { benchmarkTickMix(b, c.active, c.nodes, slots, true, false) })
	}
}

// BenchmarkTickReleased is BenchmarkTick at 1,000 active quests and
// 100k nodes, each tick starting with the store's mapped pages released,
// as a daemon's tick starts: the store releases them once a second while
// commits come and after five quiet seconds (engine/commit, Store.releaseMapped), so a
// daemon ticking once a minute maps again every page its tick reads
// (faults/tick), where BenchmarkTick's reset leaves them mapped.
func BenchmarkTickReleased(b *testing.B) {
	b.Run("active=1000/nodes=100000", func(b *testing.B) { benchmarkTickMix(b, 1000, 100_000, 1000, false, true) })
}

// BenchmarkTickBusy is a tick at the default max_parallel (2) with 1,000
// active quests: two dispatch, and the other 998 are visited (loop
// control, finished or not) but wait for a slot.
func BenchmarkTickBusy(b *testing.B) {
	for _, nodes := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("active=1000/nodes=%d/slots=2", nodes), func(b *testing.B) { benchmarkTick(b, 1000, nodes, 2) })
	}
}

var benchConfigs = []struct{ active, nodes int }{
	{10, 10_000}, {10, 100_000}, {1000, 10_000}, {1000, 100_000},
}

// failing answers at once with an answer that breaks the output contract:
// the gate runs, the node FAILs a try and goes back to pending.
var failing = funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
	return agent.Reply{Output: []byte("I looked into " + req.Node + " but have no JSON for you."), Tokens: 1, TokensReported: true}, nil
})

// BenchmarkCycle is the whole cycle of a tick: it dispatches one node per
// active quest, every agent answers at once, and each answer is judged
// and recorded. It reports the commits and syncs (fdatasync, and fsync
// when the file grows) the cycle cost, the tick's commit included.
func BenchmarkCycle(b *testing.B) {
	for _, c := range benchConfigs {
		b.Run(fmt.Sprintf("active=%d/nodes=%d", c.active, c.nodes), func(b *testing.B) {
			s, e := benchEngine(b, c.active, c.nodes, failing)
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
				m.stop()
				b.StopTimer()
				if len(rep.Dispatched) != c.active {
					b.Fatalf("iteration %d dispatched %d, want %d", i, len(rep.Dispatched), c.active)
				}
				benchReset(b, e)
				b.StartTimer()
			}
			m.report(b, "cycle")
		})
	}
}
