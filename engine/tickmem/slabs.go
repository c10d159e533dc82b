package tickmem

import "github.com/questbox/questbox/engine/domain"

// The tick's memory, reused from tick to tick.
//
// A tick of a thousand active quests carves a thousand Quests, a node
// head and a run list per dispatch and a thousand dispatches (with the
// queue's map of each quest's copy, TickCopyInto): close to
// 2 MB a tick, which the collector then has to find and sweep, and which
// the tick has to clear and fault in afresh each time. A Slabs, with the
// engine's list of dispatches (its tickSlabs), holds all of it for one
// tick; once the tick's runs have ended it goes back to the engine's free
// list (at most maxFreeSlabs), and a later tick carves from it again.
//
// Every slot is zeroed when it is carved (a decode fills a zero Quest,
// and a dispatch's unset fields must be unset), not when it is released.

// Slabs is the memory one tick carves its quests, heads and run lists
// from. Past the room it was sized with, the tick carves from slabs of
// its own (the transaction's, the engine's allocQuest); need then sizes
// the set for the next tick (Need).
type Slabs struct {
	quests []domain.Quest
	// maps[i] are the maps quests[i]'s copy of the cached quest was given
	// by the last tick that carved the slot (TickCopyInto): cleared and
	// filled again instead of cloned. They belong to the set: only the
	// slot's Quest refers to them.
	maps  []QuestMaps
	heads []domain.Node
	runs  []string
	need  SlabNeed
}

// QuestMaps are the queue map of a quest slot (Slabs.maps); its counts
// are a value (StatusCounts).
type QuestMaps struct {
	queued map[string]string
}

// SlabNeed is how many quests, heads and run lists a tick carved.
type SlabNeed struct{ quests, heads, runs int }

// Fit empties s and gives it room for need, with an eighth more for a
// tick that reads a few more quests than the last.
func (s *Slabs) Fit(need SlabNeed) {
	s.need = SlabNeed{}
	if cap(s.quests) < need.quests {
		n := need.quests + need.quests/8
		s.quests, s.maps = make([]domain.Quest, 0, n), make([]QuestMaps, n)
	}
	if cap(s.heads) < need.heads {
		s.heads = make([]domain.Node, 0, need.heads+need.heads/8)
	}
	if cap(s.runs) < need.runs {
		s.runs = make([]string, 0, need.runs+need.runs/8)
	}
	s.quests, s.heads, s.runs = s.quests[:0], s.heads[:0], s.runs[:0]
}

// Need is how many quests, heads and run lists the tick carved from s
// since Fit, those past its room too: what the next tick's set is sized
// for.
func (s *Slabs) Need() SlabNeed { return s.need }

// Quest carves a zero Quest from s (its slot's maps: MapsOf); nil when s
// is full.
func (s *Slabs) Quest() *domain.Quest { return carve(&s.quests, &s.need.quests) }

// Head carves a zero Node from s; nil when s is full.
func (s *Slabs) Head() *domain.Node { return carve(&s.heads, &s.need.heads) }

// RunList carves an empty run list with room for one run from s; nil when
// s is full.
func (s *Slabs) RunList() []string {
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

// MapsOf is the maps of q's slot when q is the quest s carved last, nil
// otherwise (a quest carved elsewhere, or earlier).
func (s *Slabs) MapsOf(q *domain.Quest) *QuestMaps {
	if s == nil {
		return nil
	}
	if i := len(s.quests) - 1; i >= 0 && &s.quests[i] == q {
		return &s.maps[i]
	}
	return nil
}
