package engine

import (
	"errors"
	"testing"
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
			qq, err := t.peek(q.ID)
			if err != nil {
				return err
			}
			_, hit = t.e.view.get(qq.ID, qq.Rev)
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
		head, ok := h.e.view.get(q.ID, h.questNow(q.ID).Rev)
		if !ok || head == nil || head.ID != first || head.Status != Pending || len(head.Runs) != 0 {
			t.Fatalf("round %d: the view's head after a dispatch: %+v, %v; want %s pending with no runs", round, head, ok, first)
		}
	}
	if node, _ := dispatchOne(t, h, q.ID); node != first {
		t.Errorf("dispatched %s, want %s", node, first)
	}
}
