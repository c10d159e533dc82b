package tickmem

import (
	"sync"

	"github.com/questbox/questbox/engine/domain"
)

// OwnerRounds is the engine's memory of the owner rounds of the quests,
// by quest: that its rounds 1 to Next-1 are in its hypothesis index, the
// last one's owner being node Last, so that the engine's NewOwner looks up
// the rounds from Next on instead of from the first, one more each owner
// turn.
//
// Why what it holds stays true: it learns from a tick's turn of a quest
// the transaction has not changed (pristine: no node of the quest was
// written in it, so neither was its hypothesis index), and a tick is a
// transaction of its own (update, never grouped with other writes), so
// the rounds it read are committed; an entry of the hypothesis index is
// never changed or removed. NewOwner still checks that round Next-1 names
// node Last before it skips the rounds below (a store replaced under the
// engine then costs the lookups, not a wrong round). It is trimmed to the
// active quests, as the sittings are.
type OwnerRounds struct {
	mu sync.Mutex // guards m
	m  map[string]OwnerRound
}

// OwnerRound is what OwnerRounds knows of a quest: see there. Its owner
// hypotheses name its direction, which the entry is for.
type OwnerRound struct {
	Direction string
	Next      int
	Last      string
}

// Get returns quest's entry for direction.
func (o *OwnerRounds) Get(quest, direction string) (OwnerRound, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	k, ok := o.m[quest]
	return k, ok && k.Direction == direction && k.Next > 1
}

// Put keeps k as quest's entry.
func (o *OwnerRounds) Put(quest string, k OwnerRound) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[string]OwnerRound{}
	}
	o.m[quest] = k
}

// Trim drops the quests that are not active.
func (o *OwnerRounds) Trim(active []*domain.Quest) {
	o.mu.Lock()
	defer o.mu.Unlock()
	trimToActive(o.m, active, nil)
}

// trimToActive drops from m, a memory by quest, the quests that are not
// active, once it holds more quests than are active, and reports whether
// it looked. drop removes one (nil: delete it from m).
func trimToActive[V any](m map[string]V, active []*domain.Quest, drop func(id string)) bool {
	if len(m) <= len(active) {
		return false
	}
	keep := make(map[string]bool, len(active))
	for _, q := range active {
		keep[q.ID] = true
	}
	for id := range m {
		if keep[id] {
			continue
		}
		if drop != nil {
			drop(id)
		} else {
			delete(m, id)
		}
	}
	return true
}
