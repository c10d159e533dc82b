package followup

import (
	"reflect"
	"testing"
)

// engine is a fake of what the chain asks of the engine: a wait group's
// count, whether Shutdown began, whether a slot is free.
type engine struct {
	held    int
	closing bool
	free    bool
}

func (e *engine) Hold() bool {
	if e.closing {
		return false
	}
	e.held++
	return true
}

func (e *engine) Release()       { e.held-- }
func (e *engine) SlotFree() bool { return e.free }

func woken(c *Chain) bool {
	select {
	case <-c.Wake():
		return true
	default:
		return false
	}
}

func TestNotesReachAPassOnlyWhileServing(t *testing.T) {
	e := &engine{}
	c := New(e)
	c.Note([]Follow{{Quest: "q1", Node: "n1"}})
	if c.On() || woken(c) || e.held != 0 {
		t.Fatalf("not serving: on %v, held %d; want the note dropped, no pass", c.On(), e.held)
	}
	if got, held := c.Take(); len(got) != 0 || held {
		t.Fatalf("not serving: took %v, held %v; want nothing", got, held)
	}
	c.Start()
	if !c.On() {
		t.Fatal("serving: on false, want true")
	}
	c.Note([]Follow{{Quest: "q2", Node: "n1"}, {Quest: "q1"}, {Quest: "q2", Node: "n2"}})
	c.Note([]Follow{{Quest: "q2", Node: "n1"}, {Quest: "q3", Node: "n3"}})
	if !woken(c) || woken(c) {
		t.Fatal("two notes: want one wake-up, coalesced")
	}
	if e.held != 1 {
		t.Fatalf("held %d, want 1: one pass due", e.held)
	}
	got, held := c.Take()
	want := []Quest{{"q2", []string{"n1", "n2"}}, {"q1", nil}, {"q3", []string{"n3"}}}
	if !held || !reflect.DeepEqual(got, want) {
		t.Fatalf("took %v, held %v; want %v in the order first noted, held", got, held, want)
	}
	if got, _ := c.Take(); len(got) != 0 {
		t.Fatalf("second take: %v, want nothing", got)
	}
}

func TestStopDropsTheNotesAndThePassDue(t *testing.T) {
	e := &engine{}
	c := New(e)
	c.Start()
	c.Note([]Follow{{Quest: "q1"}})
	c.Stop()
	if c.On() || woken(c) || e.held != 0 {
		t.Fatalf("after stop: on %v, held %d; want off, no wake-up, the count given back", c.On(), e.held)
	}
	if got, held := c.Take(); len(got) != 0 || held {
		t.Fatalf("after stop: took %v, held %v; want nothing", got, held)
	}
}

func TestNoPassOnceShutdownBegan(t *testing.T) {
	e := &engine{closing: true}
	c := New(e)
	c.Start()
	c.Note([]Follow{{Quest: "q1"}})
	if woken(c) || e.held != 0 {
		t.Fatalf("closing: held %d; want no pass due, the wait group not raised", e.held)
	}
}

// Parked quests wait for a slot: a pass is due at once only when one is
// free already, else when a run leaves its slot.
func TestParkedQuestsWaitForASlot(t *testing.T) {
	e := &engine{}
	c := New(e)
	c.Start()
	parked := []Quest{{"q1", []string{"n1"}}, {"q2", nil}}
	c.Park(parked)
	if woken(c) || e.held != 0 {
		t.Fatalf("parked, no slot free: held %d; want no pass due", e.held)
	}
	c.SlotFreed()
	if !woken(c) || e.held != 1 {
		t.Fatalf("slot freed: held %d; want a pass due", e.held)
	}
	if got, held := c.Take(); !held || !reflect.DeepEqual(got, parked) {
		t.Fatalf("took %v, held %v; want %v, held", got, held, parked)
	}
	e.held--
	c.SlotFreed()
	if woken(c) || e.held != 0 {
		t.Fatalf("slot freed, nothing parked: held %d; want no pass", e.held)
	}
	e.free = true
	c.Park(parked)
	if !woken(c) || e.held != 1 {
		t.Fatalf("parked with a slot free: held %d; want a pass due", e.held)
	}
}
