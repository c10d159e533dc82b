package engine

import (
	"github.com/questbox/questbox/engine/council"
	"github.com/questbox/questbox/engine/tickmem"
)

// The engine's side of the tick's memory of the active quests' first
// pending nodes (tickmem.PendingView): what a transaction reads through it
// and what a write hands to it once committed.

// viewUpdate is what a write transaction hands to the view after its
// commit: quest's first pending node as of revision rev.
type viewUpdate struct {
	quest string
	rev   uint64
	head  *tickmem.ViewHead
	// sitting is the quest's sitting council as of rev, for the
	// sittingOwners (council.TickSitting); nil: none.
	sitting *sittingOwner
}

// firstPending is the head of q's first pending node (nil: none), from the
// view when it knows q's revision and this transaction has not changed
// q's pending nodes yet, else from the store (and then remembered).
func (t *txn) firstPending(q *Quest) (*Node, error) {
	if t.Pristine(q) {
		place := -1
		if t.slabs != nil {
			place = int(t.laterRank) // a tick's: its quest's place
		}
		if h, ok := t.e.view.Get(q.ID, q.Rev, place); ok {
			if h == nil {
				return nil, nil
			}
			n := t.AllocHead()
			h.Node(n)
			return n, nil
		}
	}
	h, err := t.readFirstPending(q)
	if err != nil || !t.Pristine(q) {
		return h, err
	}
	t.e.view.Put(q.ID, q.Rev, tickmem.CopyHead(h))
	return h, nil
}

// Pristine says whether q is as its record is stored: this transaction has
// neither saved it nor changed one of its nodes.
func (t *txn) Pristine(q *Quest) bool { return !t.saved[q.ID] && !t.touched[q.ID] }

// readFirstPending reads the head of q's first pending node from the
// store (this transaction's state), nil if none.
func (t *txn) readFirstPending(q *Quest) (*Node, error) {
	id := first(t.tx, bPending, q.ID)
	if id == "" {
		return nil, nil
	}
	return t.NodeHead(id)
}

// touch notes that a node of quest changed in this transaction: its
// pending index or the head of a node in it may have, and so may the
// owner's material (materialMemo).
func (t *txn) touch(quest string) {
	if t.touched == nil {
		t.touched = map[string]bool{}
	}
	t.touched[quest] = true
	t.material.Forget(quest)
}

// viewOf works out, for a quest this transaction saves with revision
// q.Rev, its first pending node as the commit will leave it. A node it
// cannot read (a damaged index) is no reason to fail the write: the view
// then learns nothing, and the tick reads the store and meets the damage
// as it did before the view.
func (t *txn) viewOf(q *Quest) {
	if q.Status != QuestActive {
		return
	}
	h, err := t.readFirstPending(q)
	if err != nil {
		return
	}
	t.updates = append(t.updates, viewUpdate{quest: q.ID, rev: q.Rev, head: tickmem.CopyHead(h), sitting: council.SittingOf(t, q)})
}
