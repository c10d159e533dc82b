package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
)

// The tick's memory reused from tick to tick (tickslabs.go).

// askedFor is what a provider was asked for one node: the request's
// quest, node, project directory and hypothesis, and how many times.
type askedFor struct {
	quest, node, dir, hyp string
	times                 int
}

// askLog keeps, by node, what a provider was asked.
type askLog struct {
	mu  sync.Mutex
	got map[string]askedFor
}

func (l *askLog) note(req agent.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.got == nil {
		l.got = map[string]askedFor{}
	}
	a := l.got[req.Node]
	l.got[req.Node] = askedFor{quest: req.Quest, node: req.Node, dir: req.Dir, hyp: req.Hypothesis, times: a.times + 1}
}

// checkAsked checks that each node of dispatched was asked for once, with
// its own quest, project and hypothesis (projects: by quest id), and that
// its last run ended, recorded on it.
func checkAsked(t *testing.T, h *harness, l *askLog, dispatched []string, projects map[string]string) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range dispatched {
		n := h.node(id)
		want := askedFor{quest: n.Quest, node: id, dir: projects[n.Quest], hyp: n.Hypothesis, times: 1}
		if got := l.got[id]; got != want {
			t.Errorf("node %s: the provider was asked %+v, want %+v", id, got, want)
		}
		runs, err := h.e.QuestRuns("", id)
		if err != nil || len(runs) == 0 || runs[len(runs)-1].Ended.IsZero() || runs[len(runs)-1].Outcome == "discarded" {
			t.Errorf("node %s: runs %+v, %v; want its last run ended with its answer", id, runs, err)
		}
	}
	if len(l.got) != len(dispatched) {
		t.Errorf("the provider was asked for %d nodes, %d were dispatched: %+v", len(l.got), len(dispatched), l.got)
	}
}

// newProject returns a project directory of its own for quest i.
func newProject(t *testing.T, root string, i int) string {
	t.Helper()
	d := filepath.Join(root, fmt.Sprint(i))
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// Runs still in flight when the next tick carves its memory: a run held
// by its provider, and runs queued for a start slot that read nothing of
// their dispatch yet. A first tick sizes the engine's set of slabs and
// gives it back; the second carves from it and its runs are held; the
// third reads more quests (the new ones come first in the active index,
// so a slot reused would hold another quest) and dispatches as many. Once
// released, every run asks for its own node, quest and project, and its
// answer is recorded on its own node.
func TestHeldRunsKeepTheirTickMemory(t *testing.T) {
	var (
		asked askLog
		hold  atomic.Bool
	)
	entered, release := make(chan struct{}, 64), make(chan struct{})
	p := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		if !hold.Load() {
			return reply("no JSON in this answer: the node fails a try"), nil
		}
		asked.note(req)
		entered <- struct{}{}
		<-release
		return reply(answer("dead", "held until the next tick had carved its memory")), nil
	})
	h := newHarness(t, Options{Providers: map[string]Provider{"p": p}, MaxParallel: 100})
	free := sync.OnceFunc(func() { close(release) })
	t.Cleanup(free) // before the harness's: its Shutdown waits for the runs
	root := t.TempDir()
	projects := map[string]string{}
	quest := func(i int) {
		dir := newProject(t, root, i)
		q := h.quest(func(s *QuestSpec) {
			s.Provider, s.Mode, s.Project = "p", ModeSolo, dir
			s.Direction = fmt.Sprintf("direction %d", i)
			s.Limits.MaxTries, s.Limits.MaxStalled = 100, 0
		})
		projects[q.ID] = dir
	}
	for i := range 6 {
		quest(i)
	}
	if rep := h.tick(); len(rep.Dispatched) != 6 {
		t.Fatalf("first tick: %+v", rep)
	}
	// Two start slots: two runs wait in the provider, the others in the
	// queue, their dispatch not read yet.
	h.e.startMax = 2
	hold.Store(true)
	held, err := h.e.Tick(context.Background())
	if err != nil || len(held.Dispatched) != 6 {
		t.Fatalf("second tick: %+v, %v", held, err)
	}
	<-entered
	<-entered
	if h.e.slabReuses != 1 {
		t.Fatalf("the second tick took no released set (%d): nothing here is reused", h.e.slabReuses)
	}
	for i := 6; i < 12; i++ {
		quest(i)
	}
	third, err := h.e.Tick(context.Background())
	if err != nil || len(third.Dispatched) != 6 {
		t.Fatalf("third tick: %+v, %v", third, err)
	}
	if h.e.slabReuses != 1 {
		t.Errorf("the third tick reused a set of slabs while the second's runs were in flight")
	}
	free()
	h.e.Wait()
	checkAsked(t, h, &asked, append(held.Dispatched, third.Dispatched...), projects)
}

// In steady state a tick carves from the set the previous tick's runs
// gave back, also when a dispatch never ran (aborted between the commit
// and its start) and when a run was aborted while it waited for a start
// slot: every dispatch releases its hold.
func TestTickSlabsAreReusedOnceTheRunsEnd(t *testing.T) {
	var asked askLog
	entered, release := make(chan struct{}, 64), make(chan struct{}, 64)
	p := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		asked.note(req)
		entered <- struct{}{}
		<-release
		return reply("no JSON in this answer: the node fails a try"), nil
	})
	h := newHarness(t, Options{Providers: map[string]Provider{"p": p}, MaxParallel: 100})
	h.e.startMax = 1
	var qs []string
	for i := range 4 {
		q := h.quest(func(s *QuestSpec) {
			s.Provider, s.Mode, s.Direction = "p", ModeSolo, fmt.Sprintf("direction %d", i)
			s.Limits.MaxTries, s.Limits.MaxStalled = 100, 0
		})
		qs = append(qs, q.ID)
	}
	for i := range 4 {
		asked.got = nil // no run of the tick started yet
		var dropped string
		if i == 1 {
			// Aborted after the commit, before its start: it never runs.
			h.e.startHook = func() {
				dropped = h.questNow(qs[0]).Running
				if _, err := h.e.AbortNode(dropped, "dropped before its start"); err != nil {
					t.Errorf("abort: %v", err)
				}
			}
		}
		rep, err := h.e.Tick(context.Background())
		h.e.startHook = nil
		if err != nil || len(rep.Dispatched) < 2 {
			t.Fatalf("tick %d: %+v, %v", i, rep, err)
		}
		if i == 2 {
			// One run in the provider, the others queued for the one
			// start slot: abort the last, which leaves the queue
			// cancelled.
			<-entered
			if _, err := h.e.AbortNode(rep.Dispatched[len(rep.Dispatched)-1], "aborted while queued"); err != nil {
				t.Fatal(err)
			}
		}
		for range rep.Dispatched {
			release <- struct{}{}
		}
		h.e.Wait()
		if dropped == "" && i == 1 {
			t.Fatal("nothing was dropped")
		}
		if dropped != "" && asked.got[dropped].times != 0 {
			t.Fatalf("the dropped node %s was run", dropped)
		}
		if got := h.e.slabReuses; got != i {
			t.Fatalf("after tick %d: %d ticks took a released set, want %d", i, got, i)
		}
		for len(entered) > 0 {
			<-entered
		}
		for len(release) > 0 {
			<-release
		}
		h.clock.Advance(time.Minute)
	}
}

// A dispatch slot of a reused set starts zeroed: a worker's dispatch in
// the slot an owner's filled the tick before (the owner's request built
// by the tick, the worker's by its run) asks for the worker, not with the
// owner's request.
func TestReusedDispatchSlotStartsZeroed(t *testing.T) {
	var asked askLog
	p := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		asked.note(req)
		return reply("no JSON in this answer: the node fails a try"), nil
	})
	// One slot: each tick dispatches one node, in the set's first slot.
	h := newHarness(t, Options{Providers: map[string]Provider{"p": p}, MaxParallel: 1})
	team := h.quest(func(s *QuestSpec) {
		s.Provider, s.Mode = "p", ModeTeam
		s.Limits.MaxTries, s.Limits.MaxStalled = 100, 0
	})
	// Its root aborted, nothing is pending: its owner's turn comes.
	if _, err := h.e.AbortNode(h.nodesByStatus(team.ID)[Pending][0], "the owner's turn"); err != nil {
		t.Fatal(err)
	}
	owner := h.tick()
	if len(owner.Dispatched) != 1 || h.node(owner.Dispatched[0]).Role != RoleOwner {
		t.Fatalf("first tick: %+v, want the owner dispatched", owner)
	}
	if _, err := h.e.StopQuest(team.ID, SourceCLI); err != nil {
		t.Fatal(err)
	}
	solo := h.quest(func(s *QuestSpec) { s.Provider, s.Mode = "p", ModeSolo })
	asked.got = nil
	worker := h.tick()
	if len(worker.Dispatched) != 1 || h.node(worker.Dispatched[0]).Quest != solo.ID {
		t.Fatalf("second tick: %+v, want the new quest's worker dispatched", worker)
	}
	if h.e.slabReuses != 1 {
		t.Fatalf("the second tick took no released set (%d): nothing here is reused", h.e.slabReuses)
	}
	checkAsked(t, h, &asked, worker.Dispatched, map[string]string{})
}

// A quest slot of a reused set starts zeroed: a quest record of the JSON
// form (before schema 4, as salvage or an older store leaves it) decodes
// over what the slot holds, field by field, so a field its record leaves
// out (here the project, cleared, and the running node, none) would keep
// the value the slot's quest had the tick before.
func TestReusedQuestSlotStartsZeroed(t *testing.T) {
	var asked askLog
	p := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		asked.note(req)
		return reply("no JSON in this answer: the node fails a try"), nil
	})
	h := newHarness(t, Options{Providers: map[string]Provider{"p": p}})
	dir := t.TempDir()
	q := h.quest(func(s *QuestSpec) {
		s.Provider, s.Mode, s.Project = "p", ModeSolo, dir
		s.Limits.MaxTries, s.Limits.MaxStalled = 100, 0
	})
	h.tick() // sizes the set
	h.tick() // carves from it: the quest's slot holds its project
	cleared := h.questNow(q.ID)
	cleared.Project = ""
	raw, err := json.Marshal(cleared)
	if err != nil {
		t.Fatal(err)
	}
	// Written as a writer other than the engine's transactions would (the
	// engine writes a quest record only as it saves the quest, which its
	// decoded quests learn): the tick reads the record again.
	if err := h.e.store.update(func(tx *store.Tx) error { return tx.Quests().Put([]byte(q.ID), raw) }); err != nil {
		t.Fatal(err)
	}
	asked.got = nil
	rep := h.tick()
	if len(rep.Dispatched) != 1 {
		t.Errorf("the quest did not dispatch: %+v (a field left in its slot: its running node?)", rep)
	}
	if h.e.slabReuses != 2 {
		t.Fatalf("%d ticks took a released set, want 2", h.e.slabReuses)
	}
	checkAsked(t, h, &asked, rep.Dispatched, map[string]string{q.ID: ""})
}

// A tick carves its keys, records and event group records from the
// bytes the tick before it kept, and lists and sorts its quests in the
// lists it kept (tickScratch): once a tick has sized them, the next one
// of the same size makes none; and what it wrote from them reads back
// (its events, each once, in order).
func TestTickCarvesFromTheScratchTheLastOneKept(t *testing.T) {
	h := newHarness(t, Options{Providers: map[string]Provider{"p": unreachable}, MaxParallel: 200})
	h.bulk(120, 2, func(s *QuestSpec) { s.Provider, s.Mode = "p", ModeSolo })
	var kept [5]unsafe.Pointer
	var keptMap unsafe.Pointer
	for i := range 3 {
		from := h.e.LastSeq()
		var to uint64
		h.e.startHook = func() { to = h.e.LastSeq() }
		rep := h.tick()
		if len(rep.Dispatched) != 120 {
			t.Fatalf("tick %d dispatched %d, want 120", i, len(rep.Dispatched))
		}
		// The tick's recs: keyed from its first event to its last.
		var seqs []uint64
		recs := 0
		err := h.e.store.view(func(tx *store.Tx) error {
			c := tx.Events().Cursor()
			for k, v := c.Seek(u64(from + 1)); k != nil && seqOf(k) <= to; k, v = c.Next() {
				recs++
				if _, err := records.EachEvent(k, v, 0, func(ev *Event) bool { seqs = append(seqs, ev.Seq); return true }); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if recs == 0 || len(seqs) != int(to-from) || seqs[0] != from+1 || !slices.IsSorted(seqs) || seqs[len(seqs)-1] != to {
			t.Fatalf("tick %d: %d recs holding %d events; want them to hold %d..%d in order", i, recs, len(seqs), from+1, to)
		}
		tb := h.e.tickScratch
		if tb == nil || cap(tb.block) == 0 || cap(tb.groups) == 0 || cap(tb.quests) < 120 || cap(tb.keys) < 120 || cap(tb.rank) < 120 {
			t.Fatalf("tick %d kept nothing for the next: %+v", i, tb)
		}
		if len(tb.quests) != 0 || tb.quests[:1][0] != nil || len(tb.keys) != 0 || tb.keys[:1][0].q != nil || len(tb.byID) != 0 {
			t.Fatalf("tick %d kept its quests in its scratch", i)
		}
		// The map of quests is sized by the last tick's count: the
		// second tick makes it, the third reads into the same.
		if i > 0 && tb.byID == nil {
			t.Fatalf("tick %d kept no map of quests for the next", i)
		}
		if i == 2 && reflect.ValueOf(tb.byID).UnsafePointer() != keptMap {
			t.Fatalf("the third tick made a map of quests of its own")
		}
		keptMap = reflect.ValueOf(tb.byID).UnsafePointer()
		now := [5]unsafe.Pointer{unsafe.Pointer(unsafe.SliceData(tb.block)), unsafe.Pointer(unsafe.SliceData(tb.groups)),
			unsafe.Pointer(unsafe.SliceData(tb.quests)), unsafe.Pointer(unsafe.SliceData(tb.keys)), unsafe.Pointer(unsafe.SliceData(tb.rank))}
		// The first tick's nodes came back deferred: the second and the
		// third undefer and dispatch them, the same work.
		if i == 2 && now != kept {
			t.Fatalf("the third tick, of the second's size, made memory of its own: %v, then %v", kept, now)
		}
		kept = now
	}
}
