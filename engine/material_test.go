package engine

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/council"
	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/prompt"
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
)

// The members of a council dispatched in one tick share one read of the
// owner's material and of the nodes above them (materialMemo), and each
// gets the very request it got when every member read them itself, from
// its own provider (a member's seat, read without decoding its record).
func TestCouncilMembersShareTheOwnersMaterial(t *testing.T) {
	worker := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		return reply(answer("promising", "the scout found two leads worth weighing", "alpha lead", "beta lead")), nil
	})
	got := make(chan agent.Request, 3)
	release := make(chan struct{})
	member := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		got <- req
		<-release
		return reply("no vote"), nil
	})
	h := localHarness(t, Options{Providers: map[string]Provider{"w": worker, "m": member}, MaxParallel: 3,
		Vendors: map[string]string{"m": "local"}})
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	q := h.quest(func(s *QuestSpec) {
		s.Provider, s.Mode, s.Roles = "w", ModeTeam, []string{RoleScout, RolePOC, RoleOwner}
		s.CouncilReviewers, s.CouncilJudges = []string{"m", "m"}, []string{"m"}
	})

	// Tick until the council's members are dispatched.
	var members []string
	for i := 0; i < 10 && members == nil; i++ {
		rep, err := h.e.Tick(context.Background())
		if err != nil {
			t.Fatalf("tick %d: %v", i, err)
		}
		for _, id := range rep.Dispatched {
			if domain.IsMember(h.node(id).Role) {
				members = append(members, id)
			}
		}
		if members == nil {
			h.e.Wait()
			h.clock.Advance(time.Minute)
		}
	}
	if len(members) != 3 {
		t.Fatalf("members dispatched in one tick: %v, want 3", members)
	}
	reqs := map[string]agent.Request{}
	for range members {
		r := <-got
		r.Started = nil // the engine's start slot, not part of what the tick built
		reqs[r.Node] = r
	}

	// What each member's request was when each read the material itself
	// (no memo), in the committed store the tick left.
	want := map[string]agent.Request{}
	err := h.store.view(func(tx *store.Tx) error {
		qq, _, err := getQuest(tx, q.ID)
		if err != nil {
			return err
		}
		for _, id := range members {
			n, err := records.ReadNode(tx, id)
			if err != nil {
				return err
			}
			n.Status = Pending // as the tick saw it
			if want[id], err = h.e.buildRequest(tx, nil, qq, n); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range members {
		g, w := reqs[id], want[id]
		if !reflect.DeepEqual(g, w) {
			t.Errorf("member %s: got request\n%+v\nwant\n%+v", id, g, w)
		}
		for _, s := range []string{": alpha lead\n", ": beta lead\n", "evidence: the scout found two leads"} {
			if !strings.Contains(g.Prompt, s) {
				t.Errorf("member %s: prompt lacks %q:\n%s", id, s, g.Prompt)
			}
		}
	}

	// In one transaction the three members read the material once: the
	// memo's entry is the first member's for the other two, and a change
	// of one of the quest's nodes forgets it.
	err = h.e.update(func(t2 *txn) error {
		qq, err := t2.Peek(q.ID)
		if err != nil {
			return err
		}
		var first *prompt.Material
		for i, id := range members {
			n, err := t2.NodeHead(id)
			if err != nil {
				return err
			}
			n.Status = Pending
			r, err := t2.request(qq, n)
			if err != nil {
				return err
			}
			m, _ := t2.material.Held(q.ID)
			if m == nil {
				t.Fatalf("member %s: no material kept", id)
			}
			if i == 0 {
				first = m
			} else if m != first {
				t.Errorf("member %s read the material again", id)
			}
			if r.Prompt != want[id].Prompt {
				t.Errorf("member %s: prompt in one transaction\n%s\nwant\n%s", id, r.Prompt, want[id].Prompt)
			}
		}
		// The nodes above the members (their owner) were read once too.
		if _, chains := t2.material.Held(q.ID); len(chains) != 1 {
			t.Errorf("ancestries kept: %v, want one (the members' owner)", chains)
		} else {
			for parent, a := range chains {
				if a.Parent == nil || a.Parent.ID != parent || len(a.Nodes) == 0 || a.Nodes[0].ID != parent || a.Parent.Role != RoleOwner {
					t.Errorf("ancestry of parent %s: %+v", parent, a)
				}
			}
		}
		if m := t2.material.Material(&Quest{ID: q.ID, Rev: qq.Rev + 1}, first.Cap()); m != nil {
			t.Errorf("material of revision %d used for revision %d", qq.Rev, qq.Rev+1)
		}
		t2.touch(q.ID)
		if m, chains := t2.material.Held(q.ID); m != nil || chains != nil {
			t.Errorf("material or ancestry kept after a node of the quest changed")
		}
		return t2.unchanged()
	})
	if err != nil {
		t.Fatal(err)
	}
	released = true
	close(release)
	h.e.Wait()
}

// A council member's run renders the prompt its dispatch read in the
// tick's transaction (dispatch.member): a commit between the tick and the
// run that changes the owner's material (here a new proposal) does not
// reach it. Each member gets, byte for byte, the request built in the
// store as the tick left it; built in the store as it is when the run
// starts, it would list the late proposal.
func TestMemberPromptIsTheTicksAfterALaterCommit(t *testing.T) {
	worker := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		return reply(answer("promising", "the scout found two leads worth weighing", "alpha lead", "beta lead")), nil
	})
	got := make(chan agent.Request, 3)
	release := make(chan struct{})
	member := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		got <- req
		<-release
		return reply("no vote"), nil
	})
	h := localHarness(t, Options{Providers: map[string]Provider{"w": worker, "m": member}, MaxParallel: 3,
		Vendors: map[string]string{"m": "local"}})
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	q := h.quest(func(s *QuestSpec) {
		s.Provider, s.Mode, s.Roles = "w", ModeTeam, []string{RoleScout, RolePOC, RoleOwner}
		s.CouncilReviewers, s.CouncilJudges = []string{"m"}, []string{"m", "m"}
	})
	const late = "a proposal made after the tick committed"
	want := map[string]agent.Request{}
	// Between the tick that seats the council and its members' runs:
	// the requests as the committed tick defines them, then a commit
	// that changes the material.
	h.e.startHook = func() {
		if len(want) > 0 || h.questNow(q.ID).Queued[queuedCouncil] == "" {
			return
		}
		err := h.store.view(func(tx *store.Tx) error {
			qq, _, err := getQuest(tx, q.ID)
			if err != nil {
				return err
			}
			hb := subRO(tx, bHyps, q.ID)
			owner, err := records.ReadNode(tx, qq.Queued[queuedCouncil])
			if err != nil {
				return err
			}
			for _, s := range council.Seats(qq, owner, council.Sitting(owner)) {
				n, err := records.ReadNode(tx, string(hb.Get(hypKey(s.Hyp))))
				if err != nil {
					return err
				}
				n.Status = Pending // as the tick saw it
				if want[n.ID], err = h.e.buildRequest(tx, nil, qq, n); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Errorf("the requests as the tick left the store: %v", err)
			return
		}
		err = h.e.update(func(t *txn) error {
			qq, err := t.Quest(q.ID)
			if err != nil {
				return err
			}
			_, _, err = t.NewNode(qq, nil, RoleScout, late, Proposed, "")
			return err
		})
		if err != nil {
			t.Errorf("the later commit: %v", err)
		}
	}
	defer func() { h.e.startHook = nil }()
	var members []string
	for i := 0; i < 10 && members == nil; i++ {
		rep, err := h.e.Tick(context.Background())
		if err != nil {
			t.Fatalf("tick %d: %v", i, err)
		}
		for _, id := range rep.Dispatched {
			if domain.IsMember(h.node(id).Role) {
				members = append(members, id)
			}
		}
		if members == nil {
			h.e.Wait()
			h.clock.Advance(time.Minute)
		}
	}
	if len(members) != 3 || len(want) != 3 {
		t.Fatalf("members dispatched in one tick: %v, requests taken before the later commit: %d; want 3 of each", members, len(want))
	}
	for range members {
		r := <-got
		r.Started = nil // the engine's start slot, not part of the request
		if w, ok := want[r.Node]; !ok {
			t.Errorf("a request for %s, not a member of the sitting", r.Node)
		} else if !reflect.DeepEqual(r, w) {
			t.Errorf("member %s: got request\n%+v\nwant (the store as the tick left it)\n%+v", r.Node, r, w)
		}
		if strings.Contains(r.Prompt, late) {
			t.Errorf("member %s's prompt shows a proposal committed after its tick:\n%s", r.Node, r.Prompt)
		}
	}
	// The later commit did change the material: built now, the prompt
	// lists the late proposal.
	err := h.store.view(func(tx *store.Tx) error {
		qq, _, err := getQuest(tx, q.ID)
		if err != nil {
			return err
		}
		n, err := records.ReadNode(tx, members[0])
		if err != nil {
			return err
		}
		n.Status = Pending
		now, err := h.e.buildRequest(tx, nil, qq, n)
		if err == nil && !strings.Contains(now.Prompt, late) {
			t.Errorf("built from the store after the later commit, the prompt does not show it:\n%s", now.Prompt)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	close(release)
	released = true
	h.e.Wait()
}
