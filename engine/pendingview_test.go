package engine

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/tickmem"
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
			_, hit = t.e.view.Get(qq.ID, qq.Rev, -1)
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
		head, ok := h.e.view.Get(q.ID, h.questNow(q.ID).Rev, -1)
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
// (tickmem.CopyHead, ViewHead.Node): what firstPending hands a dispatch from the
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
		tickmem.CopyHead(head).Node(&got)
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
