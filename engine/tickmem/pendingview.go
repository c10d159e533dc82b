package tickmem

import (
	"sync"

	"github.com/questbox/questbox/engine/domain"
)

// The tick's memory of the active quests' first pending nodes.
//
// Picking a quest's next node reads its pending index and the head of the
// node it names, a search in the nodes bucket that holds every node the
// box ever made: for a thousand quests that was most of a tick. The
// PendingView remembers, per quest, the head of the first node of its
// pending index (nil when it is empty) together with the revision of the
// quest's record it belongs to (Quest.Rev, raised by every save).
//
// It is kept in step only with what commits: a write transaction that
// saves a quest works out that quest's first pending node from its own
// final state and hands it over once its commit succeeded (the engine's write), so a
// transaction rolled back (the group commit runs a write again without
// the one that failed) never leaves anything here. What it holds is
// correct by construction, however late it arrives: an entry is used
// only while the quest's record still has the entry's revision, and every
// change of a quest's pending index or of a node in it saves the quest
// (the engine's Move, NewNode, SaveNode), which raises the revision. An entry of an
// older revision is simply missed, and the tick reads the store as before
// and remembers what it read. The view starts empty at open: the first
// tick of a process reads every quest's first node once.
type PendingView struct {
	mu sync.Mutex // guards m, at and their entries
	m  map[string]*viewEntry
	// at is the entries by the place of their quests in the active index
	// (the engine's txn.laterRank), as the ticks last looked them up: from tick to
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
	head  *ViewHead // nil: none pending
}

// ViewHead is what the view keeps of a node's head (records.NodeHead, headOf):
// its fields but its runs, which a head read for its dispatch gets from
// its running entry (none, for a node that can be dispatched). A third of
// a Node: a dispatch copies it into a head of its own (the engine's firstPending), and
// the copy reads the fewer cache lines of a head the tick has not seen
// since the last.
type ViewHead struct {
	ID, Quest, Parent, Role, Hypothesis       string
	Status                                    domain.Status
	Feedback, Provider, Team, Stage           string
	Order                                     uint64
	Depth, Tries, RevisionCount, MaxRevisions int
	runCount                                  int
	head                                      bool
}

// Node fills n, a zero Node, with h.
func (h *ViewHead) Node(n *domain.Node) {
	n.ID, n.Quest, n.Parent, n.Role, n.Hypothesis = h.ID, h.Quest, h.Parent, h.Role, h.Hypothesis
	n.Status = h.Status
	n.Feedback, n.Provider, n.Team, n.Stage = h.Feedback, h.Provider, h.Team, h.Stage
	n.Order = h.Order
	n.Depth, n.Tries, n.RevisionCount, n.MaxRevisions = h.Depth, h.Tries, h.RevisionCount, h.MaxRevisions
	n.HeadRuns, n.HeadOnly = h.runCount, h.head
}

// Get returns quest's first pending node as of revision rev; ok is false
// when the view does not know it. The head is the view's, never changed
// once in the view, so reading it outside the lock is safe.
//
// place is the quest's place in the active index (a tick's: at), or -1.
func (v *PendingView) Get(quest string, rev uint64, place int) (head *ViewHead, ok bool) {
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

// Put remembers quest's first pending node as of revision rev, unless a
// newer revision's is known already.
func (v *PendingView) Put(quest string, rev uint64, head *ViewHead) {
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

// Trim drops the quests that are no longer active, once the view holds
// more quests than are active.
func (v *PendingView) Trim(active []*domain.Quest) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if trimToActive(v.m, active, nil) {
		// The places have changed; the entries dropped must not be found.
		v.at = nil
	}
}

// CopyHead is a copy of head for the view, nil for nil.
func CopyHead(head *domain.Node) *ViewHead {
	if head == nil {
		return nil
	}
	return &ViewHead{ID: head.ID, Quest: head.Quest, Parent: head.Parent, Role: head.Role, Hypothesis: head.Hypothesis,
		Status: head.Status, Feedback: head.Feedback, Provider: head.Provider, Team: head.Team, Stage: head.Stage,
		Order: head.Order, Depth: head.Depth, Tries: head.Tries, RevisionCount: head.RevisionCount, MaxRevisions: head.MaxRevisions,
		runCount: head.HeadRuns, head: head.HeadOnly}
}

// Entry returns the revision and the head of quest's entry, whatever its
// revision; ok is false when the view holds none. For the engine's checks
// of what the view holds (its tests): not on a tick's path.
func (v *PendingView) Entry(quest string) (rev uint64, head *ViewHead, ok bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	e := v.m[quest]
	if e == nil {
		return 0, nil, false
	}
	return e.rev, e.head, true
}
