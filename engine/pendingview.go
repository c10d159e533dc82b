package engine

import (
	"sync"

	"github.com/questbox/questbox/engine/council"
)

// The tick's memory of the active quests' first pending nodes.
//
// Picking a quest's next node reads its pending index and the head of the
// node it names, a search in the nodes bucket that holds every node the
// box ever made: for a thousand quests that was most of a tick. The
// pendingView remembers, per quest, the head of the first node of its
// pending index (nil when it is empty) together with the revision of the
// quest's record it belongs to (Quest.Rev, raised by every save).
//
// It is kept in step only with what commits: a write transaction that
// saves a quest works out that quest's first pending node from its own
// final state and hands it over once its commit succeeded (write), so a
// transaction rolled back (the group commit runs a write again without
// the one that failed) never leaves anything here. What it holds is
// correct by construction, however late it arrives: an entry is used
// only while the quest's record still has the entry's revision, and every
// change of a quest's pending index or of a node in it saves the quest
// (move, newNode, saveNode), which raises the revision. An entry of an
// older revision is simply missed, and the tick reads the store as before
// and remembers what it read. The view starts empty at open: the first
// tick of a process reads every quest's first node once.
type pendingView struct {
	mu sync.Mutex // guards m, at and their entries
	m  map[string]*viewEntry
	// at is the entries by the place of their quests in the active index
	// (txn.laterRank), as the ticks last looked them up: from tick to
	// tick a quest keeps its place while no quest becomes or stops being
	// active, and a tick's thousand lookups step through at instead of
	// searching the map, scattered over the heap, for each. An entry found
	// there is its quest's when its quest is; a miss is looked up in m.
	at []*viewEntry
}

// viewEntry is quest's first pending node as of revision rev.
type viewEntry struct {
	quest string
	rev   uint64
	head  *viewHead // nil: none pending
}

// viewHead is what the view keeps of a node's head (records.NodeHead, headOf):
// its fields but its runs, which a head read for its dispatch gets from
// its running entry (none, for a node that can be dispatched). A third of
// a Node: a dispatch copies it into a head of its own (firstPending), and
// the copy reads the fewer cache lines of a head the tick has not seen
// since the last.
type viewHead struct {
	ID, Quest, Parent, Role, Hypothesis       string
	Status                                    Status
	Feedback, Provider, Team, Stage           string
	Order                                     uint64
	Depth, Tries, RevisionCount, MaxRevisions int
	runCount                                  int
	head                                      bool
}

// node fills n, a zero Node, with h.
func (h *viewHead) node(n *Node) {
	n.ID, n.Quest, n.Parent, n.Role, n.Hypothesis = h.ID, h.Quest, h.Parent, h.Role, h.Hypothesis
	n.Status = h.Status
	n.Feedback, n.Provider, n.Team, n.Stage = h.Feedback, h.Provider, h.Team, h.Stage
	n.Order = h.Order
	n.Depth, n.Tries, n.RevisionCount, n.MaxRevisions = h.Depth, h.Tries, h.RevisionCount, h.MaxRevisions
	n.HeadRuns, n.HeadOnly = h.runCount, h.head
}

// get returns quest's first pending node as of revision rev; ok is false
// when the view does not know it. The head is the view's, never changed
// once in the view, so reading it outside the lock is safe.
//
// place is the quest's place in the active index (a tick's: at), or -1.
func (v *pendingView) get(quest string, rev uint64, place int) (head *viewHead, ok bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	var e *viewEntry
	if place >= 0 && place < len(v.at) && v.at[place] != nil && v.at[place].quest == quest {
		e = v.at[place]
	} else if e = v.m[quest]; e != nil && place >= 0 && place <= len(v.m) {
		if place >= len(v.at) {
			v.at = append(v.at, make([]*viewEntry, place+1-len(v.at))...)
		}
		v.at[place] = e
	}
	if e == nil || e.rev != rev {
		return nil, false
	}
	return e.head, true
}

// put remembers quest's first pending node as of revision rev, unless a
// newer revision's is known already.
func (v *pendingView) put(quest string, rev uint64, head *viewHead) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.m == nil {
		v.m = map[string]*viewEntry{}
	}
	e := v.m[quest]
	switch {
	case e == nil:
		v.m[quest] = &viewEntry{quest: quest, rev: rev, head: head}
	case e.rev <= rev:
		e.rev, e.head = rev, head // at may hold it too
	}
}

// trim drops the quests that are no longer active, once the view holds
// more quests than are active.
func (v *pendingView) trim(active []*Quest) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.m) <= len(active) {
		return
	}
	keep := make(map[string]bool, len(active))
	for _, q := range active {
		keep[q.ID] = true
	}
	for id := range v.m {
		if !keep[id] {
			delete(v.m, id)
		}
	}
	// The places have changed; the entries dropped must not be found.
	v.at = nil
}

// viewUpdate is what a write transaction hands to the view after its
// commit: quest's first pending node as of revision rev.
type viewUpdate struct {
	quest string
	rev   uint64
	head  *viewHead
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
		if h, ok := t.e.view.get(q.ID, q.Rev, place); ok {
			if h == nil {
				return nil, nil
			}
			n := t.AllocHead()
			h.node(n)
			return n, nil
		}
	}
	h, err := t.readFirstPending(q)
	if err != nil || !t.Pristine(q) {
		return h, err
	}
	t.e.view.put(q.ID, q.Rev, copyHead(h))
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

// copyHead is a copy of head for the view, nil for nil.
func copyHead(head *Node) *viewHead {
	if head == nil {
		return nil
	}
	return &viewHead{ID: head.ID, Quest: head.Quest, Parent: head.Parent, Role: head.Role, Hypothesis: head.Hypothesis,
		Status: head.Status, Feedback: head.Feedback, Provider: head.Provider, Team: head.Team, Stage: head.Stage,
		Order: head.Order, Depth: head.Depth, Tries: head.Tries, RevisionCount: head.RevisionCount, MaxRevisions: head.MaxRevisions,
		runCount: head.HeadRuns, head: head.HeadOnly}
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
	t.updates = append(t.updates, viewUpdate{quest: q.ID, rev: q.Rev, head: copyHead(h), sitting: council.SittingOf(t, q)})
}
