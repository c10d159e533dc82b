package domain

import "testing"

// Every status has its own slot, in the order of Statuses.
func TestStatusIndexIsStatusesOrder(t *testing.T) {
	if len(Statuses) != nStatus {
		t.Fatalf("%d statuses, nStatus %d", len(Statuses), nStatus)
	}
	for want, s := range Statuses {
		if i, ok := statusIndex(s); !ok || i != want {
			t.Errorf("status %s: index %d, %v; want %d", s, i, ok, want)
		}
	}
	if _, ok := statusIndex("stuck"); ok {
		t.Error("an unknown status has an index")
	}
}

// A count moves as the map's did: one fewer of a status counted once is
// none (its entry deleted), and never below none; counting into nil
// counts makes them; a status not known counts 0 and cannot be counted.
func TestStatusCountsMoveAsTheMap(t *testing.T) {
	var c StatusCounts
	if c.Len() != -1 || c.String() != "map[]" {
		t.Fatalf("zero counts: len %d, %s; want nil's -1, map[]", c.Len(), c)
	}
	c.Inc(Pending)
	c.Inc(Pending)
	c.Dec(Pending)
	c.Inc(Running)
	c.Dec(Deferred)
	if c.Len() != 2 || c.Get(Pending) != 1 || c.Get(Running) != 1 || c.Get(Deferred) != 0 || c.Get("stuck") != 0 || c.String() != "map[pending:1 running:1]" {
		t.Fatalf("counts %s (len %d), want map[pending:1 running:1]", c, c.Len())
	}
	c.Dec(Pending)
	if c.Len() != 1 || c.Total() != 1 {
		t.Fatalf("counts %s: len %d, total %d; want 1, 1", c, c.Len(), c.Total())
	}
	defer func() {
		if recover() == nil {
			t.Error("counting a node of an unknown status did not panic")
		}
	}()
	c.Inc("stuck")
}
