package engine

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/questbox/questbox/engine/agent"
)

// TestTickKeepsTeamAndCouncilEntriesForTheEnd: a tick of solo quests,
// quests with Teams and quests whose council sits puts every running
// entry it makes in one sorted put at its end (flushRunning), the Team
// quests' and the council members' with the solo quests' (ownTurn,
// council), and the index then names each dispatched node's run: the
// nodes are running, and the next tick dispatches none of them again.
func TestTickKeepsTeamAndCouncilEntriesForTheEnd(t *testing.T) {
	release := make(chan struct{})
	var asked atomic.Int32
	p := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		asked.Add(1)
		<-release
		return reply("no JSON in this answer"), nil
	})
	h := newHarness(t, Options{Providers: map[string]Provider{"p": p}, MaxParallel: 100})
	var councils []*Quest
	want := 0
	for i := range 12 {
		q := h.quest(func(s *QuestSpec) {
			s.Provider, s.Name = "p", fmt.Sprint("q", i)
			switch i % 3 {
			case 1:
				s.Mode, s.Teams, s.MaxRevisions, s.AcceptMode = ModeTeam, true, DefaultMaxRevisions, AcceptJudge
			case 2:
				s.Mode, s.Roles = ModeTeam, []string{RoleScout, RolePOC, RoleOwner}
				h.e.SetCouncil(s, 2, 1, nil)
			}
		})
		if i%3 == 2 {
			councils = append(councils, q)
			want += 3
		} else {
			want++
		}
	}
	// Each council sits: its quest's root aborted, its owner's turn
	// opened the council, its three members pending.
	for _, q := range councils {
		err := h.e.update(func(t *txn) error {
			qq, err := t.quest(q.ID)
			if err != nil {
				return err
			}
			root, err := t.node(first(t.tx, bPending, qq.ID))
			if err != nil {
				return err
			}
			if err := t.abort(qq, root, "test"); err != nil {
				return err
			}
			owner, _, err := t.newOwner(qq, false)
			if err != nil {
				return err
			}
			return t.openCouncil(qq, owner)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	rep, err := h.e.Tick(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Dispatched) != want {
		t.Fatalf("dispatched %d, want %d: %v", len(rep.Dispatched), want, rep.Dispatched)
	}
	if got := len(h.e.later.order); got != want {
		t.Errorf("the tick's last put of kept running entries put %d, want all %d", got, want)
	}
	if !slices.IsSorted(h.e.later.order) {
		t.Errorf("the kept running entries were put out of order: %v", h.e.later.order)
	}
	running, err := h.e.QuestRuns("", "")
	if err != nil {
		t.Fatal(err)
	}
	runOf := map[string]string{}
	for _, r := range running {
		runOf[r.Node] = r.ID
	}
	members := 0
	for _, id := range rep.Dispatched {
		n := h.node(id)
		if n.Status != Running || len(n.Runs) == 0 || n.Runs[len(n.Runs)-1] != runOf[id] || runOf[id] == "" {
			t.Errorf("node %s after the tick: %s, runs %v; its run %q", id, n.Status, n.Runs, runOf[id])
		}
		if isMember(n.Role) {
			members++
		}
	}
	if members != 3*len(councils) {
		t.Errorf("%d members dispatched, want %d", members, 3*len(councils))
	}
	var entries int
	if err := h.store.view(func(tx *bolt.Tx) error {
		entries = tx.Bucket(bRunning).Stats().KeyN
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if entries != want {
		t.Errorf("%d running entries, want %d", entries, want)
	}
	again, err := h.e.Tick(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Dispatched) != 0 {
		t.Errorf("the next tick dispatched %v again", again.Dispatched)
	}
	close(release)
	h.e.Wait()
	if int(asked.Load()) != want {
		t.Errorf("%d runs asked their agent, want %d", asked.Load(), want)
	}
}
