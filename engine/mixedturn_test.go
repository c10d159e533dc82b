package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/council"
	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/engine/tickmem"
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
	// Each council sits (sitCouncil), its three members pending.
	for _, q := range councils {
		err := h.e.update(func(t *txn) error {
			qq, err := t.Quest(q.ID)
			if err != nil {
				return err
			}
			return t.sitCouncil(qq)
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
	tickedRunning(t, h, rep)
	members := 0
	for _, id := range rep.Dispatched {
		if domain.IsMember(h.node(id).Role) {
			members++
		}
	}
	if members != 3*len(councils) {
		t.Errorf("%d members dispatched, want %d", members, 3*len(councils))
	}
	close(release)
	h.e.Wait()
	if int(asked.Load()) != want {
		t.Errorf("%d runs asked their agent, want %d", asked.Load(), want)
	}
}

// sitCouncil makes q's council sit: its root aborted, its owner's turn
// came and opened the council, its members pending.
func (t *txn) sitCouncil(q *Quest) error {
	root, err := t.Node(first(t.tx, bPending, q.ID))
	if err != nil {
		return err
	}
	if err := t.Abort(q, root, "test"); err != nil {
		return err
	}
	owner, _, err := t.NewOwner(q, false)
	if err != nil {
		return err
	}
	return council.Open(t, q, owner)
}

// tickedRunning checks the store after tick rep, its runs in flight:
// each node it dispatched is running with its run, the running index has
// an entry for each and no other, and the next tick dispatches none of
// them again.
func tickedRunning(t *testing.T, h *harness, rep TickReport) {
	t.Helper()
	running, err := h.e.QuestRuns("", "")
	if err != nil {
		t.Fatal(err)
	}
	runOf := map[string]string{}
	for _, r := range running {
		runOf[r.Node] = r.ID
	}
	for _, id := range rep.Dispatched {
		n := h.node(id)
		if n.Status != Running || len(n.Runs) == 0 || n.Runs[len(n.Runs)-1] != runOf[id] || runOf[id] == "" {
			t.Errorf("node %s after the tick: %s, runs %v; its run %q", id, n.Status, n.Runs, runOf[id])
		}
	}
	var entries int
	if err := h.store.view(func(tx *store.Tx) error {
		entries = tx.Running().KeyN()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if entries != len(rep.Dispatched) {
		t.Errorf("%d running entries, want %d", entries, len(rep.Dispatched))
	}
	again, err := h.e.Tick(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Dispatched) != 0 {
		t.Errorf("the next tick dispatched %v again", again.Dispatched)
	}
}

// TestOwnerTurnStartsFromTheRoundsTheTickKnows: a tick's owner turn
// learns the owner rounds it found in the hypothesis index
// (tickmem.OwnerRounds), and the next one looks them up from there, after it
// checked that the last round it knows names the owner it remembers: a
// wrong memory costs the lookups, never a wrong round.
func TestOwnerTurnStartsFromTheRoundsTheTickKnows(t *testing.T) {
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) { s.Provider, s.Mode = ProviderExternal, ModeTeam })
	if _, err := h.e.Scan(q.ID, []string{"tesseract jpn"}); err != nil {
		t.Fatal(err)
	}
	// abortOwner aborts q's pending owner (the root, at first): an owner
	// turn is due at the next tick, with nothing pending.
	abortOwner := func() {
		t.Helper()
		err := h.e.update(func(t *txn) error {
			qq, err := t.Quest(q.ID)
			if err != nil {
				return err
			}
			id := qq.Queued[RoleOwner]
			if id == "" {
				id = first(t.tx, bPending, qq.ID)
			}
			n, err := t.Node(id)
			if err != nil {
				return err
			}
			return t.Abort(qq, n, "test")
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// ownerTurn ticks and returns the owner node the turn created.
	ownerTurn := func(round int) *Node {
		t.Helper()
		abortOwner()
		h.tick()
		id := h.questNow(q.ID).Queued[RoleOwner]
		if id == "" {
			t.Fatalf("no owner pending after the tick (round %d)", round)
		}
		n := h.node(id)
		if want := fmt.Sprintf("(owner round %d)", round); !strings.HasSuffix(n.Hypothesis, want) {
			t.Fatalf("owner %s: hypothesis %q, want it to end %q", n.ID, n.Hypothesis, want)
		}
		return n
	}
	ownerTurn(1)
	ownerTurn(2)
	third := ownerTurn(3)
	if k, ok := h.e.owners.Get(q.ID, q.Direction); !ok || k.Next != 3 || k.Last == "" {
		t.Fatalf("the tick knows %+v (%v), want rounds 1 and 2", k, ok)
	}
	// A memory that names another owner for its last round is not used.
	h.e.owners.Put(q.ID, tickmem.OwnerRound{Direction: q.Direction, Next: 9, Last: "n999"})
	ownerTurn(4)
	if k, _ := h.e.owners.Get(q.ID, q.Direction); k.Next != 4 || k.Last != third.ID {
		t.Fatalf("the tick knows %+v, want rounds 1 to 3, the third %s", k, third.ID)
	}
	// The first round's entry taken out of the index behind the
	// engine's back: a turn that looked the rounds up from the first
	// would open round 1 again; one that starts from what it knows opens
	// round 5.
	err := h.store.update(func(tx *store.Tx) error {
		return tx.Hyps().Bucket([]byte(q.ID)).Delete(hypKey(ownerHypothesis(q, false, 1)))
	})
	if err != nil {
		t.Fatal(err)
	}
	ownerTurn(5)
}
