package tickmem

import (
	"maps"
	"testing"

	"github.com/questbox/questbox/engine/domain"
)

// A quest slot's queue map, filled by its previous tick, is emptied
// before a copy of a cached quest goes into it, and stays the slot's: the
// cached quest's counts and queue are not touched by a change of the
// copy, and nil counts and a nil map stay nil (as maps.Clone's).
func TestTickCopyIntoASlotsMaps(t *testing.T) {
	cached := &domain.Quest{ID: "q1", Counts: domain.CountsOf(map[domain.Status]int{domain.Pending: 2}), Queued: map[string]string{domain.RoleOwner: "n9"}}
	m := &QuestMaps{queued: map[string]string{domain.RoleStrategist: "n3"}}
	queued := m.queued
	var q domain.Quest
	TickCopyInto(&q, cached, m)
	if q.Counts != cached.Counts || !maps.Equal(q.Queued, cached.Queued) {
		t.Fatalf("copy: counts %v, queued %v; want %v, %v", q.Counts, q.Queued, cached.Counts, cached.Queued)
	}
	q.Counts.Inc(domain.Running)
	delete(q.Queued, domain.RoleOwner)
	if cached.Counts.Total() != 2 || cached.Counts.Get(domain.Running) != 0 || cached.Queued[domain.RoleOwner] != "n9" {
		t.Fatalf("a change of the copy reached the cached quest: %v, %v", cached.Counts, cached.Queued)
	}
	if len(queued) != 0 {
		t.Error("the copy's queue is not its slot's map")
	}
	TickCopyInto(&q, &domain.Quest{ID: "q2"}, m)
	if q.Counts.Len() != -1 || q.Queued != nil {
		t.Errorf("nil counts and queue copied as %v, %v; want nil", q.Counts, q.Queued)
	}
}
