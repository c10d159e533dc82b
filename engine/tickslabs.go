package engine

import "github.com/questbox/questbox/engine/tickmem"

// The tick's memory, reused from tick to tick: the slabs a tick carves
// its quests, node heads and run lists from (tickmem.Slabs, where the
// reason for them is told) and its list of dispatches, kept as one set on
// the engine's free list.
//
// Who holds a tick's slabs after its commit (docs/design.md, "Memory on a
// small box"): only its dispatches. A dispatch's quest, node head, run list
// and member prompt are read by its run until runAgent returns; everything
// the tick hands to the engine's memories (tickmem.QuestCache, PendingView,
// sittingOwners) is a copy (their cachedCopy, CopyHead, WithAt), and TickReport
// holds ids only. So the set is counted once per dispatch (refs) and released
// at the end of each run (runAgent) and where a dispatch never runs (start,
// for a run aborted before it started); a tick that dispatched nothing
// releases it at once. A tick whose transaction fails (or is retried afresh)
// gives its set to nobody: it is left to the collector, so that nothing a
// rolled-back attempt left behind can reach a later tick.

// maxFreeSlabs is how many released sets the engine keeps: one is what a
// box whose runs end within a tick needs; a second covers a tick that
// starts while the last run of the previous one is being recorded.
const maxFreeSlabs = 2

// tickSlabs is the memory one tick carves its quests, heads, run lists
// (tickmem.Slabs) and dispatches from.
type tickSlabs struct {
	tickmem.Slabs
	ds []dispatch
	// refs is how many of the tick's dispatches have not ended their
	// run (guarded by Engine.mu).
	refs int
}

// takeSlabs returns a set for a tick, from the free list when one waits
// there; e.mu is held. The set is not sized yet (tickmem.Slabs.Fit).
func (e *Engine) takeSlabs() *tickSlabs {
	n := len(e.slabFree)
	if n == 0 {
		return new(tickSlabs)
	}
	s := e.slabFree[n-1]
	e.slabFree[n-1] = nil
	e.slabFree = e.slabFree[:n-1]
	e.slabReuses++
	return s
}

// dispatches returns an empty dispatch list with room for n, the set's.
func (s *tickSlabs) dispatches(n int) []dispatch {
	if cap(s.ds) < n {
		s.ds = make([]dispatch, 0, n)
	}
	return s.ds[:0]
}

// holdSlabs counts the dispatches of a tick that committed in its set, or
// releases the set at once when it dispatched nothing; need sizes the
// next tick's set.
func (e *Engine) holdSlabs(s *tickSlabs, dispatches int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.slabNeed = s.Need()
	s.refs = dispatches
	if dispatches == 0 {
		e.freeSlabs(s)
	}
}

// releaseSlabs ends one dispatch's hold on s (nil: none): its run ended,
// or it never ran. The last one gives s back to the free list.
func (e *Engine) releaseSlabs(s *tickSlabs) {
	if s == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	s.refs--
	switch {
	case s.refs < 0:
		panic("BUG: a tick's slabs released more often than its dispatches")
	case s.refs == 0:
		e.freeSlabs(s)
	}
}

// freeSlabs puts s, which nothing holds any more, on the free list unless
// it is full; e.mu is held.
func (e *Engine) freeSlabs(s *tickSlabs) {
	if len(e.slabFree) < maxFreeSlabs {
		e.slabFree = append(e.slabFree, s)
	}
}

// tickScratch is the memory a tick's transaction uses only while it
// runs, kept from tick to tick: the bytes it carves its keys and records
// (txn.spare) and its event group records from, about 130 KB for
// a thousand dispatches, the list and sort keys of its active quests
// (activeQuests), and its map of the quests it read (txn.quests). Unlike the slabs, nothing holds it once the transaction
// has ended: bbolt reads the keys and values it was given until the
// commit, and the one record handed on past the commit, a saved quest's,
// is copied by the quest cache (tickmem.QuestCache.LearnAt) before the tick's update returns.
// So the tick gives it back then (keepTickScratch); a tick that starts in
// the meantime finds none and makes its own.
type tickScratch struct {
	block, groups []byte
	quests        []*Quest
	refs          []tickmem.CachedRef
	keys          []dispatchKey
	rank          []int32
	byID          map[string]*Quest
}

// questsByID is the kept map of a tick's quests, emptied, or a new one
// sized for n, the quests the last tick read: a map of a thousand grown
// from empty is rehashed seven times.
func (tb *tickScratch) questsByID(n int) map[string]*Quest {
	if tb.byID == nil {
		tb.byID = make(map[string]*Quest, n)
	}
	return tb.byID
}

// takeTickScratch returns the kept tickScratch, or a new one.
func (e *Engine) takeTickScratch() *tickScratch {
	e.mu.Lock()
	defer e.mu.Unlock()
	tb := e.tickScratch
	e.tickScratch = nil
	if tb == nil {
		tb = new(tickScratch)
	}
	return tb
}

// lend has t, a tick's transaction (each attempt's afresh: a rolled-back
// one left nothing behind that reads it), use tb.
func (tb *tickScratch) lend(t *txn) {
	t.block = carver{b: tb.block[:0]}
	t.groups = carver{b: tb.groups[:0]}
	t.scratch = tb
}

// keepTickScratch keeps tb for the next tick once t, the tick's last
// attempt, has ended: its blocks grown by what t had to carve past them,
// its lists and map emptied (they point at the tick's quests).
func (e *Engine) keepTickScratch(tb *tickScratch, t *txn) {
	tb.block = grownBy(tb.block, t.block.made)
	tb.groups = grownBy(tb.groups, t.groups.made)
	clear(tb.quests)
	clear(tb.keys)
	clear(tb.byID)
	tb.quests, tb.keys = tb.quests[:0], tb.keys[:0]
	e.mu.Lock()
	defer e.mu.Unlock()
	e.tickScratch = tb
}

// grownBy is b, emptied, with room for lacked bytes more (and an eighth).
func grownBy(b []byte, lacked int) []byte {
	if lacked == 0 {
		return b[:0]
	}
	n := cap(b) + lacked
	return make([]byte, 0, n+n/8)
}
