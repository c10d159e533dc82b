package engine

// The tick's memory, reused from tick to tick.
//
// A tick of a thousand active quests carves a thousand Quests, a node
// head and a run list per dispatch and a thousand dispatches (with the
// queue's map of each quest's copy, tickCopyInto): close to
// 2 MB a tick, which the collector then has to find and sweep, and which
// the tick has to clear and fault in afresh each time. A tickSlabs holds
// all of it for one tick; once the tick's runs have ended it goes back to
// the engine's free list (at most maxFreeSlabs), and a later tick carves
// from it again.
//
// Who holds a tick's slabs after its commit (docs/design.md, "Memory on a
// small box"): only its dispatches. A dispatch's quest, node head, run list
// and member prompt are read by its run until runAgent returns; everything
// the tick hands to the engine's memories (questCache, pendingView,
// sittingOwners) is a copy (cachedCopy, copyHead, WithAt), and TickReport
// holds ids only. So the set is counted once per dispatch (refs) and released
// at the end of each run (runAgent) and where a dispatch never runs (start,
// for a run aborted before it started); a tick that dispatched nothing
// releases it at once. A tick whose transaction fails (or is retried afresh)
// gives its set to nobody: it is left to the collector, so that nothing a
// rolled-back attempt left behind can reach a later tick.
//
// Every slot is zeroed when it is carved (a decode fills a zero Quest,
// and a dispatch's unset fields must be unset), not when it is released.

// maxFreeSlabs is how many released sets the engine keeps: one is what a
// box whose runs end within a tick needs; a second covers a tick that
// starts while the last run of the previous one is being recorded.
const maxFreeSlabs = 2

// tickSlabs is the memory one tick carves its quests, heads, run lists
// and dispatches from. Past the room it was sized with, the tick carves
// from slabs of its own (the transaction's, allocQuest); need then sizes
// the set for the next tick.
type tickSlabs struct {
	quests []Quest
	// maps[i] are the maps quests[i]'s copy of the cached quest was given
	// by the last tick that carved the slot (tickCopyInto): cleared and
	// filled again instead of cloned. They belong to the set: only the
	// slot's Quest refers to them.
	maps  []questMaps
	heads []Node
	runs  []string
	ds    []dispatch
	need  slabNeed
	// refs is how many of the tick's dispatches have not ended their
	// run (guarded by Engine.mu).
	refs int
}

// questMaps are the queue map of a quest slot (tickSlabs.maps); its counts
// are a value (StatusCounts).
type questMaps struct {
	queued map[string]string
}

// slabNeed is how many quests, heads and run lists a tick carved.
type slabNeed struct{ quests, heads, runs int }

// takeSlabs returns a set for a tick, from the free list when one waits
// there; e.mu is held. The set is not sized yet (fit).
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

// fit empties s and gives it room for need, with an eighth more for a
// tick that reads a few more quests than the last.
func (s *tickSlabs) fit(need slabNeed) {
	s.need = slabNeed{}
	if cap(s.quests) < need.quests {
		n := need.quests + need.quests/8
		s.quests, s.maps = make([]Quest, 0, n), make([]questMaps, n)
	}
	if cap(s.heads) < need.heads {
		s.heads = make([]Node, 0, need.heads+need.heads/8)
	}
	if cap(s.runs) < need.runs {
		s.runs = make([]string, 0, need.runs+need.runs/8)
	}
	s.quests, s.heads, s.runs = s.quests[:0], s.heads[:0], s.runs[:0]
}

// dispatches returns an empty dispatch list with room for n, the set's.
func (s *tickSlabs) dispatches(n int) []dispatch {
	if cap(s.ds) < n {
		s.ds = make([]dispatch, 0, n)
	}
	return s.ds[:0]
}

// quest carves a zero Quest from s (its slot's maps: mapsOf); nil when s
// is full.
func (s *tickSlabs) quest() *Quest { return carve(&s.quests, &s.need.quests) }

// head carves a zero Node from s; nil when s is full.
func (s *tickSlabs) head() *Node { return carve(&s.heads, &s.need.heads) }

// runList carves an empty run list with room for one run from s; nil when
// s is full.
func (s *tickSlabs) runList() []string {
	if carve(&s.runs, &s.need.runs) == nil {
		return nil
	}
	i := len(s.runs) - 1
	return s.runs[i : i : i+1]
}

// carve takes the next slot of slab, zeroed, and counts it in need,
// which counts those past the slab's room too; nil when slab is full.
func carve[T any](slab *[]T, need *int) *T {
	*need++
	i := len(*slab)
	if i == cap(*slab) {
		return nil
	}
	*slab = (*slab)[:i+1]
	p := &(*slab)[i]
	var zero T
	*p = zero
	return p
}

// mapsOf is the maps of q's slot when q is the quest s carved last, nil
// otherwise (a quest carved elsewhere, or earlier).
func (s *tickSlabs) mapsOf(q *Quest) *questMaps {
	if s == nil {
		return nil
	}
	if i := len(s.quests) - 1; i >= 0 && &s.quests[i] == q {
		return &s.maps[i]
	}
	return nil
}

// holdSlabs counts the dispatches of a tick that committed in its set, or
// releases the set at once when it dispatched nothing; need sizes the
// next tick's set.
func (e *Engine) holdSlabs(s *tickSlabs, dispatches int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.slabNeed = s.need
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
// is copied by the questCache (learn) before the tick's update returns.
// So the tick gives it back then (keepTickScratch); a tick that starts in
// the meantime finds none and makes its own.
type tickScratch struct {
	block, groups []byte
	quests        []*Quest
	refs          []cachedRef
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
