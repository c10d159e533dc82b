package tickmem

import (
	"testing"

	"github.com/questbox/questbox/engine/domain"
)

// TestViewPlacesAreOnlyHints looks quests up in the PendingView by places
// that are theirs, another quest's, stale after a trim, or none: an entry
// is found at a place only when it is the quest's, and is of the
// revision asked for.
func TestViewPlacesAreOnlyHints(t *testing.T) {
	var v PendingView
	a, b := &ViewHead{ID: "n1"}, &ViewHead{ID: "n2"}
	v.Put("q1", 1, a)
	v.Put("q2", 1, b)
	want := func(quest string, rev uint64, place int, head *ViewHead, ok bool) {
		t.Helper()
		if got, gotOK := v.Get(quest, rev, place); got != head || gotOK != ok {
			t.Errorf("Get(%s, %d, %d) = %v, %v; want %v, %v", quest, rev, place, got, gotOK, head, ok)
		}
	}
	want("q1", 1, 0, a, true)
	want("q1", 1, 0, a, true) // from its place now
	want("q2", 1, 0, b, true) // place 0 is q1's: q2 from the map, and its place from now
	want("q1", 1, 0, a, true)
	want("q2", 1, 1, b, true)
	want("q2", 2, 1, nil, false) // an older revision's
	c := &ViewHead{ID: "n3"}
	v.Put("q2", 2, c)
	want("q2", 1, 1, nil, false)
	want("q2", 2, 1, c, true)
	v.Put("q2", 1, b) // older than what the view knows: ignored
	want("q2", 2, 1, c, true)
	v.Trim([]*domain.Quest{{ID: "q2"}})
	want("q1", 1, 0, nil, false) // no longer active: gone, from its place too
	want("q2", 2, 1, c, true)
	want("q2", 2, -1, c, true)
	want("q2", 2, 5, c, true) // a place past the quests the view holds
}
