package engine

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/questbox/questbox/engine/records"
)

// TestDispatchLeavesTheViewsHeadAsItWas dispatches a quest's first
// pending node from the view's head twice in rolled-back writes: the
// view hands out its head for the transaction to copy (firstPending), and
// a dispatch changes the copy (its status, its runs), never the head the
// view keeps for the next tick.
func TestDispatchLeavesTheViewsHeadAsItWas(t *testing.T) {
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) { s.Provider, s.Mode = ProviderExternal, ModeSolo })
	if _, err := h.e.Scan(q.ID, []string{"first idea"}); err != nil {
		t.Fatal(err)
	}
	first := h.nodesByStatus(q.ID)[Pending][0]
	boom := errors.New("boom")
	for round := range 3 {
		var hit bool
		err := h.e.update(func(t *txn) error {
			qq, err := t.Peek(q.ID)
			if err != nil {
				return err
			}
			_, hit = t.e.view.get(qq.ID, qq.Rev, -1)
			n, err := t.firstPending(qq)
			if err != nil || n == nil {
				return errors.Join(err, ErrNotFound)
			}
			if _, err := t.newRun(qq, n, "p"); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("round %d: update: %v", round, err)
		}
		if round > 0 && !hit {
			t.Errorf("round %d: the view did not know the quest's first pending node", round)
		}
		head, ok := h.e.view.get(q.ID, h.questNow(q.ID).Rev, -1)
		if !ok || head == nil || head.ID != first || head.Status != Pending {
			t.Fatalf("round %d: the view's head after a dispatch: %+v, %v; want %s pending", round, head, ok, first)
		}
	}
	if node, _ := dispatchOne(t, h, q.ID); node != first {
		t.Errorf("dispatched %s, want %s", node, first)
	}
}

// TestViewHeadKeepsEveryFieldOfAHead reads a node whose record sets every
// field a head has (records.NodeHead) and puts its head through the view's form
// (copyHead, viewHead.node): what firstPending hands a dispatch from the
// view must be the head the store gives, but its runs.
func TestViewHeadKeepsEveryFieldOfAHead(t *testing.T) {
	h := newHarness(t, Options{})
	rec := Node{ID: "n77", Quest: "q5", Parent: "n3", Role: RoleOwner, Hypothesis: "h", Status: Pending,
		Depth: 2, Order: 77, Tries: 3, Feedback: "fb", Provider: "p", Team: "t", Stage: "s",
		RevisionCount: 4, MaxRevisions: 5, Runs: []string{"r1", "r2"}}
	raw, err := json.Marshal(&rec)
	if err != nil {
		t.Fatal(err)
	}
	var fields records.NodeHead
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	v := reflect.ValueOf(fields)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Fatalf("the test's node leaves head field %s unset: set it", v.Type().Field(i).Name)
		}
	}
	stop := errors.New("read only")
	err = h.e.update(func(tx *txn) error {
		head, err := tx.HeadOf(rec.ID, raw, nil)
		if err != nil {
			return err
		}
		var got Node
		copyHead(head).node(&got)
		want := *head
		want.Runs = nil
		if !reflect.DeepEqual(got, want) {
			t.Errorf("through the view:\n%+v\nwant\n%+v", got, want)
		}
		return stop
	})
	if !errors.Is(err, stop) {
		t.Fatal(err)
	}
}

// TestViewPlacesAreOnlyHints looks quests up in the pendingView by places
// that are theirs, another quest's, stale after a trim, or none: an entry
// is found at a place only when it is the quest's, and is of the
// revision asked for.
func TestViewPlacesAreOnlyHints(t *testing.T) {
	var v pendingView
	a, b := &viewHead{ID: "n1"}, &viewHead{ID: "n2"}
	v.put("q1", 1, a)
	v.put("q2", 1, b)
	want := func(quest string, rev uint64, place int, head *viewHead, ok bool) {
		t.Helper()
		if got, gotOK := v.get(quest, rev, place); got != head || gotOK != ok {
			t.Errorf("get(%s, %d, %d) = %v, %v; want %v, %v", quest, rev, place, got, gotOK, head, ok)
		}
	}
	want("q1", 1, 0, a, true)
	want("q1", 1, 0, a, true) // from its place now
	want("q2", 1, 0, b, true) // place 0 is q1's: q2 from the map, and its place from now
	want("q1", 1, 0, a, true)
	want("q2", 1, 1, b, true)
	want("q2", 2, 1, nil, false) // an older revision's
	c := &viewHead{ID: "n3"}
	v.put("q2", 2, c)
	want("q2", 1, 1, nil, false)
	want("q2", 2, 1, c, true)
	v.put("q2", 1, b) // older than what the view knows: ignored
	want("q2", 2, 1, c, true)
	v.trim([]*Quest{{ID: "q2"}})
	want("q1", 1, 0, nil, false) // no longer active: gone, from its place too
	want("q2", 2, 1, c, true)
	want("q2", 2, -1, c, true)
	want("q2", 2, 5, c, true) // a place past the quests the view holds
}
