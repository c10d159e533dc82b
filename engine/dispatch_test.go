package engine

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
)

// rawNode is a node's record as it is stored.
func (h *harness) rawNode(id string) []byte {
	h.t.Helper()
	var raw []byte
	err := h.store.view(func(tx *store.Tx) error {
		raw = bytes.Clone(tx.Nodes().Get(mustKey(id)))
		return nil
	})
	if err != nil || raw == nil {
		h.t.Fatalf("node %s: %v", id, err)
	}
	return raw
}

// A dispatch does not rewrite the node's record (so a tick dirties no
// page of the nodes bucket): the running index says the node runs, and
// every reader sees it running with its run; the record is written when
// the run ends, with the run once in its list.
func TestDispatchLeavesTheNodeRecordAsItIs(t *testing.T) {
	release := make(chan struct{})
	p := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		<-release
		return reply("no JSON in this answer"), nil
	})
	h := newHarness(t, Options{Providers: map[string]Provider{"p": p}, MaxParallel: 3})
	ids := h.bulk(3, 0, func(s *QuestSpec) { s.Provider = "p"; s.Mode = ModeSolo })
	var nodes []string
	for _, q := range ids {
		nodes = append(nodes, h.nodesByStatus(q)[Pending][0])
	}
	before := map[string][]byte{}
	for _, id := range nodes {
		before[id] = h.rawNode(id)
	}
	rep, err := h.e.Tick(context.Background())
	if err != nil || len(rep.Dispatched) != 3 {
		t.Fatalf("tick: %v, %v", rep, err)
	}
	for _, id := range nodes {
		if !bytes.Equal(h.rawNode(id), before[id]) {
			t.Errorf("node %s: the dispatch rewrote its record", id)
		}
		n := h.node(id)
		if n.Status != Running || len(n.Runs) != 1 {
			t.Errorf("node %s after the dispatch: %s with runs %v, want running with its run", id, n.Status, n.Runs)
		}
	}
	if got := h.nodesByStatus(ids[0])[Running]; len(got) != 1 {
		t.Errorf("quest %s lists running nodes %v, want one", ids[0], got)
	}
	close(release)
	h.e.Wait()
	for _, id := range nodes {
		n := h.node(id)
		if n.Status != Pending || n.Tries != 1 || len(n.Runs) != 1 || slices.Compact(slices.Clone(n.Runs))[0] != n.Runs[0] {
			t.Errorf("node %s after its FAIL: %s, %d tries, runs %v; want pending, 1 try, its one run", id, n.Status, n.Tries, n.Runs)
		}
		if bytes.Equal(h.rawNode(id), before[id]) {
			t.Errorf("node %s: its result was not written", id)
		}
	}
	// The next dispatch and result add the second run, once.
	release = make(chan struct{})
	close(release)
	h.tick()
	if n := h.node(nodes[0]); len(n.Runs) != 2 || n.Runs[0] == n.Runs[1] {
		t.Errorf("after a second run: runs %v, want two", n.Runs)
	}
}

// A store cut off while a node runs (its record still says pending)
// salvages with the node running, and the next open puts it back to
// pending with an interrupted attempt, as for any crash.
func TestSalvageKeepsARunningNodeRunning(t *testing.T) {
	g := newGate()
	h := newHarness(t, Options{Providers: map[string]Provider{"g": g}})
	h.quest(func(s *QuestSpec) { s.Provider = "g"; s.Mode = ModeSolo })
	// Enough records that the events bucket has pages of its own.
	h.bulk(1, 200, func(s *QuestSpec) { s.Provider = ProviderExternal })
	if _, err := h.e.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	node := <-g.started
	raw, err := os.ReadFile(filepath.Join(h.dir, StoreFile))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, StoreFile), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	g.ch(node) <- reply(answer("dead", "the original box goes on"))
	// Damage elsewhere (an events page), so that salvage rebuilds the
	// indexes from the node records.
	salvageEventsDamage(t, dir)
	h2 := &harness{t: t, dir: dir, clock: newFakeClock(), opt: Options{}}
	h2.open()
	t.Cleanup(h2.close)
	n := h2.node(node)
	if n.Status != Pending || n.Tries != 0 || len(n.Attempts) == 0 || n.Attempts[len(n.Attempts)-1].Outcome != "interrupted" {
		t.Fatalf("salvaged running node after the next open: %s, %d tries, attempts %+v; want pending, no try, an interrupted attempt", n.Status, n.Tries, n.Attempts)
	}
}

// A worker's prompt is built by its run, off the tick's transaction; it
// must be exactly the request the tick's transaction would have built: the
// node and quest are the dispatch's copies, and the ancestors it reads are
// locked records.
func TestWorkerPromptBuiltByItsRunIsTheTicksRequest(t *testing.T) {
	var (
		mu   sync.Mutex
		reqs []agent.Request
	)
	p := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		mu.Lock()
		// The engine's start slot and the run's network (the provider's
		// vendor and the quest's egress), not part of what the tick built.
		req.Started, req.Network = nil, false
		reqs = append(reqs, req)
		mu.Unlock()
		if req.Depth < 2 {
			return reply(answer("promising", fmt.Sprintf("evidence found at depth %d of the quest", req.Depth), fmt.Sprintf("a direction at depth %d", req.Depth+1))), nil
		}
		return reply("no json"), nil
	})
	h := newHarness(t, Options{Providers: map[string]Provider{"p": p}, MaxParallel: 1})
	q := h.quest(func(s *QuestSpec) { s.Provider, s.Mode, s.Limits.MaxStalled = "p", ModeSolo, 0 })
	for depth := 0; depth < 3; depth++ {
		// What the dispatch transaction would build for the pending node.
		var want agent.Request
		err := h.store.view(func(tx *store.Tx) error {
			qq, _, err := getQuest(tx, q.ID)
			if err != nil {
				return err
			}
			n, err := records.ReadNode(tx, first(tx, bPending, q.ID))
			if err != nil {
				return err
			}
			want, err = h.e.buildRequest(tx, nil, qq, n)
			// What the run adds when it starts: where it runs (its
			// network is left out above).
			want.Dir = qq.Project
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if rep := h.tick(); len(rep.Dispatched) != 1 {
			t.Fatalf("depth %d: dispatched %v, want one node", depth, rep.Dispatched)
		}
		mu.Lock()
		got := reqs[len(reqs)-1]
		mu.Unlock()
		if got.Depth != depth {
			t.Fatalf("dispatched depth %d, want %d", got.Depth, depth)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("depth %d: the run's request\n%+v\nwant the tick's\n%+v", depth, got, want)
		}
		if depth > 0 && !strings.Contains(got.Prompt, "evidence found at depth 0") {
			t.Errorf("depth %d: the prompt lacks the root's evidence:\n%s", depth, got.Prompt)
		}
	}
}

// The running entries of a tick's plain dispatches are put at the end of
// the tick, in key order (flushRunning), with the turns of other quests
// (Team mode here) between them: after the tick every dispatched node
// reads running with the tick's run, the index holds one entry per
// dispatch and nothing else, and the next tick dispatches none of them
// again.
func TestTickPutsEveryRunningEntry(t *testing.T) {
	release := make(chan struct{})
	p := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		<-release
		return reply("no JSON in this answer"), nil
	})
	h := newHarness(t, Options{Providers: map[string]Provider{"p": p}, MaxParallel: 100})
	// Ids q1…q14: the tick serves them in creation order, the index
	// keys them as strings (q1, q10, …, q14, q2, …).
	for i := range 14 {
		mode := ModeSolo
		if i%4 == 3 {
			mode = ModeTeam
		}
		h.quest(func(s *QuestSpec) { s.Provider = "p"; s.Mode = mode; s.Name = fmt.Sprint("q", i) })
	}
	rep, err := h.e.Tick(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Dispatched) != 14 {
		t.Fatalf("dispatched %d, want 14", len(rep.Dispatched))
	}
	tickedRunning(t, h, rep)
	close(release)
	h.e.Wait()
}

// The running entries activeQuests lays over the active quests, walking
// beside the active index (runningWalk), are exactly those a seek per
// quest finds (overlayDispatch): for quests read in key order with others
// skipped between them (read earlier in the transaction, or finished
// with entries left), a few or many (past the walk's steps), ids that are
// prefixes of others' ("q1", "q10", "q100"), entries folded already and
// not.
func TestRunningWalkIsTheSeek(t *testing.T) {
	db, err := store.OpenBare(filepath.Join(t.TempDir(), "walk.db"), false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rng := rand.New(rand.NewPCG(23, 80))
	roles := []string{RoleScout, RoleOwner, RoleStrategist}
	for trial := 0; trial < 40; trial++ {
		ids := make([]string, 0, 150)
		for i := 1; i <= 150; i++ {
			ids = append(ids, fmt.Sprint("q", i))
		}
		slices.SortFunc(ids, strings.Compare) // the active index's order
		seqs := map[string]uint64{}
		err := db.Update(func(tx *store.Tx) error {
			_ = tx.DeleteBucket(bRunning)
			b, err := tx.CreateBucket(bRunning)
			if err != nil {
				return err
			}
			run := uint64(0)
			for _, id := range ids {
				for n := rng.IntN(5) - 1; n > 0; n-- {
					run++
					node := fmt.Sprint("n", rng.IntN(1000))
					r := &Run{ID: domain.RunID(run), Quest: id, Node: node, Role: roles[rng.IntN(len(roles))], Provider: "p"}
					if err := b.Put(store.RunningKey(id, node), records.AppendRunning(nil, id, node, r)); err != nil {
						return err
					}
				}
				seqs[id] = uint64(rng.IntN(int(run) + 1)) // some entries folded already
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// The quests walked: all, or a part with gaps of every length.
		walked := ids[:0:0]
		for i := 0; i < len(ids); {
			walked = append(walked, ids[i])
			switch rng.IntN(4) {
			case 0:
				i++
			case 1:
				i += 2 + rng.IntN(4)
			case 2:
				i += 9 + rng.IntN(20)
			default:
				i++
			}
		}
		err = db.View(func(tx *store.Tx) error {
			w := &runningWalk{c: tx.Running().Cursor()}
			for _, id := range walked {
				got := &Quest{ID: id, DispatchSeq: seqs[id], Counts: domain.CountsOf(map[Status]int{Pending: 3})}
				want := &Quest{ID: id, DispatchSeq: seqs[id], Counts: domain.CountsOf(map[Status]int{Pending: 3})}
				w.overlay(got)
				overlayDispatch(tx.Running().Cursor(), want)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("trial %d, quest %s: the walk gives %+v, the seek %+v", trial, id, got, want)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
