package engine

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/runlog"
	"github.com/questbox/questbox/engine/store"
)

// startQuests makes n solo quests on provider "p" and returns the engine
// with at most slots runs in their starting phase.
func startQuests(t *testing.T, p Provider, n, slots int) *harness {
	t.Helper()
	h := newHarness(t, Options{Providers: map[string]Provider{"p": p}, MaxParallel: 100})
	h.e.startMax = slots
	for i := range n {
		h.quest(func(s *QuestSpec) { s.Provider = "p"; s.Mode = ModeSolo; s.Name = fmt.Sprint("q", i) })
	}
	return h
}

// queueState is the number of runs in their starting phase and queued.
func (e *Engine) queueState() (starters, queued int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.starters, len(e.startQueue)
}

// A tick's runs start at most startMax at a time, in dispatch order; the
// rest wait queued yet count as in flight (max_parallel keeps its
// meaning), and every one of them runs and is recorded.
func TestStartIsBounded(t *testing.T) {
	const runs, slots = 12, 2
	var (
		mu      sync.Mutex
		in, top int
		order   []string
	)
	entered := make(chan struct{})
	release := make(chan struct{})
	// A provider that never calls Started: it holds its slot until it
	// returns.
	p := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		mu.Lock()
		in++
		top = max(top, in)
		order = append(order, req.Node)
		mu.Unlock()
		entered <- struct{}{}
		<-release
		mu.Lock()
		in--
		mu.Unlock()
		return reply(answer("dead", "this was a dead end, sadly")), nil
	})
	h := startQuests(t, p, runs, slots)
	rep, err := h.e.Tick(context.Background())
	if err != nil || len(rep.Dispatched) != runs {
		t.Fatalf("tick: got %d dispatched, %v; want %d", len(rep.Dispatched), err, runs)
	}
	if starters, queued := h.e.queueState(); starters != slots || queued != runs-slots {
		t.Errorf("after the tick: %d starting, %d queued; want %d and %d", starters, queued, slots, runs-slots)
	}
	if got := h.e.InFlight(); got != runs {
		t.Errorf("in flight: got %d, want %d (queued runs count)", got, runs)
	}
	// Both slots fill; then each answer lets the next queued run in.
	for range slots {
		<-entered
	}
	for range runs - slots {
		release <- struct{}{}
		<-entered
	}
	for range slots {
		release <- struct{}{}
	}
	h.e.Wait()
	if top != slots {
		t.Errorf("at most %d runs were in their provider at once, want %d", top, slots)
	}
	// With two slots the first two may swap, and so may each pair after;
	// no run may overtake one dispatched more than a slot's width before.
	pos := map[string]int{}
	for i, n := range order {
		pos[n] = i
	}
	for i, n := range rep.Dispatched {
		if d := pos[n] - i; d > slots-1 || d < -(slots-1) {
			t.Errorf("run of %s started %d-th, dispatched %d-th: the queue is not in order (%v, dispatched %v)", n, pos[n], i, order, rep.Dispatched)
		}
	}
	if starters, queued := h.e.queueState(); starters != 0 || queued != 0 {
		t.Errorf("after the runs: %d starting, %d queued; want none", starters, queued)
	}
	runsOf, err := h.e.QuestRuns("", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runsOf {
		if r.Exit != ExitAnswered {
			t.Errorf("run %s: exit %q, want %q", r.ID, r.Exit, ExitAnswered)
		}
	}
	if len(runsOf) != runs {
		t.Errorf("%d runs recorded, want %d", len(runsOf), runs)
	}
}

// An agent that has started (Started called) frees its slot while it
// works: with one slot, every run's agent is under way at once.
func TestStartedAgentFreesItsSlot(t *testing.T) {
	const runs = 5
	entered := make(chan string, runs)
	release := make(chan struct{})
	p := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		req.Started()
		entered <- req.Node
		<-release // slow to answer
		return reply(answer("dead", "this was a dead end, sadly")), nil
	})
	h := startQuests(t, p, runs, 1)
	if _, err := h.e.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Were the slot held until the answer, the second run would never
	// reach its provider and this would wait forever.
	for range runs {
		<-entered
	}
	if starters, queued := h.e.queueState(); starters != 0 || queued != 0 {
		t.Errorf("with every agent under way: %d starting, %d queued; want none", starters, queued)
	}
	close(release)
	h.e.Wait()
}

// Shutdown with runs still queued for a slot: each ends interrupted, as a
// run cancelled before its agent started, and none is lost.
func TestShutdownWithQueuedRuns(t *testing.T) {
	const runs = 6
	entered := make(chan struct{}, runs)
	var mu sync.Mutex
	var cancelledAtStart int
	p := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		if ctx.Err() != nil {
			mu.Lock()
			cancelledAtStart++
			mu.Unlock()
			return agent.Reply{}, ctx.Err()
		}
		entered <- struct{}{}
		<-ctx.Done() // never answers; holds its slot
		// The runs queued behind this one have no context yet: each
		// gets its own, from the engine's that Shutdown cancelled,
		// when it leaves the queue.
		return agent.Reply{}, ctx.Err()
	})
	h := startQuests(t, p, runs, 1)
	if _, err := h.e.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-entered
	if _, queued := h.e.queueState(); queued != runs-1 {
		t.Fatalf("%d runs queued, want %d", queued, runs-1)
	}
	h.e.Shutdown(0)
	if got := h.e.InFlight(); got != 0 {
		t.Errorf("after Shutdown: %d runs in flight, want 0", got)
	}
	if cancelledAtStart != runs-1 {
		t.Errorf("%d queued runs reached their provider already cancelled, want %d", cancelledAtStart, runs-1)
	}
	all, err := h.e.QuestRuns("", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != runs {
		t.Fatalf("%d runs recorded, want %d", len(all), runs)
	}
	for _, r := range all {
		if r.Exit != ExitInterrupted {
			t.Errorf("run %s: exit %q, want %q", r.ID, r.Exit, ExitInterrupted)
		}
		if n := h.node(r.Node); n.Status != Pending {
			t.Errorf("node %s of run %s: %s, want pending again", r.Node, r.ID, n.Status)
		}
	}
}

// A run is named at its start from what its dispatch knew, without a
// read: the name its log carries is the one the readers (QuestRuns, and
// runName's read of the node) give it, over retries, deferrals and every
// role of a default quest.
func TestDispatchNamesRunsAsTheReaders(t *testing.T) {
	logs, err := runlog.Open(filepath.Join(t.TempDir(), "logs"), runlog.MinPerRun, 256*runlog.MinPerRun)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	calls := 0
	p := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		mu.Lock()
		calls++
		c := calls
		mu.Unlock()
		switch c % 3 {
		case 0:
			return agent.Reply{}, fmt.Errorf("no route: %w", agent.ErrUnavailable)
		case 1:
			return reply("no json here, a FAIL"), nil
		}
		return reply(answer("promising", "worth growing further, with evidence", "a lead "+fmt.Sprint(c))), nil
	})
	h := newHarness(t, Options{Providers: map[string]Provider{"p": p}, Logs: logs, MaxParallel: 10})
	for i := range 3 {
		h.quest(func(s *QuestSpec) { s.Provider = "p"; s.Name = fmt.Sprint("q", i) })
	}
	for range 12 {
		h.tick()
	}
	runs, err := h.e.QuestRuns("", "")
	if err != nil {
		t.Fatal(err)
	}
	perNode := map[string]int{}
	for _, r := range runs {
		perNode[r.Node]++
		var b bytes.Buffer
		if err := logs.Copy(&b, r.ID); err != nil {
			t.Fatalf("log of %s: %v", r.ID, err)
		}
		head, _, _ := strings.Cut(b.String(), " (run ")
		if got := strings.TrimPrefix(head, "── "); got != r.Name {
			t.Errorf("run %s started as %q, the readers name it %q", r.ID, got, r.Name)
		}
		if got := h.e.runName(r); got != r.Name {
			t.Errorf("run %s: runName reads %q, QuestRuns %q", r.ID, got, r.Name)
		}
	}
	again := 0
	for _, k := range perNode {
		if k > 1 {
			again++
		}
	}
	if len(runs) < 10 || again < 3 {
		t.Fatalf("%d runs, %d nodes run more than once: too few to check the numbering", len(runs), again)
	}
}

// runName is the name of run r, read from its node's record (the
// readers' way), the run's id if it cannot be read: the test's second
// opinion on the name a run takes from its dispatch.
func (e *Engine) runName(r Run) string {
	name := r.ID
	_ = e.store.view(func(tx *store.Tx) error {
		n, err := records.ReadNode(tx, r.Node)
		if err != nil {
			return err
		}
		if k := slices.Index(n.Runs, r.ID); k >= 0 {
			name = domain.RunName(r.Quest, r.Node, k+1)
		}
		return nil
	})
	return name
}

// An abort of a run still queued for a start slot (it has no context yet)
// reaches it: the run leaves the queue cancelled, its provider sees a
// cancelled context, and the runs queued beside it run as usual.
func TestAbortOfAQueuedRun(t *testing.T) {
	const runs = 3
	release := make(chan struct{})
	entered := make(chan struct{}, runs)
	var (
		mu        sync.Mutex
		cancelled []string
	)
	p := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		if ctx.Err() != nil {
			mu.Lock()
			cancelled = append(cancelled, req.Node)
			mu.Unlock()
			return agent.Reply{}, ctx.Err()
		}
		entered <- struct{}{}
		<-release // holds the one slot
		return reply("no json here, a FAIL"), nil
	})
	h := startQuests(t, p, runs, 1)
	rep, err := h.e.Tick(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Dispatched) != runs {
		t.Fatalf("dispatched %d, want %d", len(rep.Dispatched), runs)
	}
	<-entered
	if _, queued := h.e.queueState(); queued != runs-1 {
		t.Fatalf("%d runs queued, want %d", queued, runs-1)
	}
	h.e.mu.Lock()
	queued := h.e.startQueue[len(h.e.startQueue)-1].d.node.ID
	h.e.mu.Unlock()
	if _, err := h.e.AbortNode(queued, "aborted while queued"); err != nil {
		t.Fatal(err)
	}
	close(release)
	h.e.Wait()
	if len(cancelled) != 1 || cancelled[0] != queued {
		t.Fatalf("runs that reached their provider cancelled: %v, want only the aborted %s", cancelled, queued)
	}
	n, err := h.e.Node(queued)
	if err != nil {
		t.Fatal(err)
	}
	if n.Status != Aborted {
		t.Errorf("aborted node is %s", n.Status)
	}
	if got := h.e.InFlight(); got != 0 {
		t.Errorf("%d runs in flight after Wait, want 0", got)
	}
	h.e.mu.Lock()
	left := len(h.e.abortQueued)
	h.e.mu.Unlock()
	if left != 0 {
		t.Errorf("%d aborts of queued runs left over", left)
	}
}
