package council

import (
	"reflect"
	"testing"

	"github.com/questbox/questbox/engine/domain"
)

// What a sitting's memory keeps of a member is its record's head: a
// running entry laid over a pending record (a running status, the entry's
// run as the only run) is taken off, and a head whose record itself says
// running keeps nothing (WithAt).
func TestSittingAtKeepsTheRecordsHeads(t *testing.T) {
	q := &domain.Quest{ID: "q1", Rev: 7}
	e := &SittingOwner[[]string]{Raw: []byte(`{}`)}
	pending := &domain.Node{ID: "n2", Status: domain.Pending, HeadOnly: true}
	overlaid := &domain.Node{ID: "n3", Status: domain.Running, Runs: []string{"r9"}, HeadOnly: true}
	done := &domain.Node{ID: "n4", Status: domain.Explored, HeadOnly: true}
	got := e.WithAt(q, []*domain.Node{pending, overlaid, done})
	if got == nil || got == e || e.At != nil {
		t.Fatalf("WithAt gave %v, the entry's at %v: want a new entry", got, e.At)
	}
	want := []domain.Node{*pending, {ID: "n3", Status: domain.Pending, HeadOnly: true}, *done}
	if got.At.Rev != 7 || !reflect.DeepEqual(got.At.Heads, want) {
		t.Errorf("kept revision %d, heads %+v; want 7, %+v", got.At.Rev, got.At.Heads, want)
	}
	if overlaid.Status != domain.Running || len(overlaid.Runs) != 1 {
		t.Errorf("the member read was changed: %+v", *overlaid)
	}
	recordRunning := &domain.Node{ID: "n5", Status: domain.Running, HeadOnly: true}
	if e.WithAt(q, []*domain.Node{pending, recordRunning}) != nil {
		t.Errorf("a head whose record says running was kept")
	}
	if (&SittingOwner[[]string]{}).WithAt(q, []*domain.Node{pending}) != nil {
		t.Errorf("an entry not kept by its record's bytes kept a sitting")
	}
}
