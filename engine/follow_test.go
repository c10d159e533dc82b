package engine

import (
	"context"
	"runtime"
	"strconv"
	"testing"
)

// TestFollowSkipsToTheNewestWhenPruned pins the one follower: a
// subscription whose events were pruned before it read them says so once
// and goes on after the newest event, instead of failing for ever.
func TestFollowSkipsToTheNewestWhenPruned(t *testing.T) {
	h := newHarness(t, Options{EventRetention: 5})
	q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal })
	sub := h.e.Subscribe(1)
	defer sub.Close()
	var hyps []string
	for i := 0; i < 20; i++ {
		hyps = append(hyps, "hypothesis "+string(rune('a'+i)))
	}
	// One scan at a time: each write's events are one record, and
	// retention prunes a record whole (engine/records/eventgroup.go).
	for _, hyp := range hyps {
		if _, err := h.e.Scan(q.ID, []string{hyp}); err != nil {
			t.Fatal(err)
		}
	}
	h.tick() // prunes all but the last 5 events (and the rest of their writes')
	// The reader that does not wait skips by the same rule.
	if rb, err := h.e.ReadEvents(1, 0); err != nil || !rb.Skipped || len(rb.Events) != 0 || rb.Last != h.e.LastSeq() {
		t.Fatalf("ReadEvents after a prune: got %+v, %v, want skipped to the newest, %d", rb, err, h.e.LastSeq())
	}
	ctx := context.Background()
	b, err := sub.Follow(ctx)
	if err != nil {
		t.Fatalf("Follow after a prune: %v", err)
	}
	if last := h.e.LastSeq(); !b.Skipped || len(b.Events) != 0 || b.Last != last || sub.Last() != last {
		t.Fatalf("Follow after a prune: got skipped %v, %d events, last %d (sub at %d), want skipped, none, %d",
			b.Skipped, len(b.Events), b.Last, sub.Last(), last)
	}
	// The next change arrives as an ordinary batch.
	if _, err := h.e.AbortNode(h.nodesByStatus(q.ID)[Pending][0], "test"); err != nil {
		t.Fatal(err)
	}
	b, err = sub.Follow(ctx)
	if err != nil || b.Skipped || len(b.Events) == 0 {
		t.Fatalf("Follow after the skip: got %+v, %v, want the new events", b, err)
	}
	if b.Events[len(b.Events)-1].Seq != b.Last {
		t.Errorf("Batch.Last = %d, want the last event's seq %d", b.Last, b.Events[len(b.Events)-1].Seq)
	}
}

// TestSubscriptionReadsBoundedPages: a subscriber holds one page of events
// at a time, however many are waiting, and the pages together are every
// event once, in order.
func TestSubscriptionReadsBoundedPages(t *testing.T) {
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal })
	sub := h.e.Subscribe(h.e.LastSeq())
	defer sub.Close()
	first := h.e.LastSeq() + 1
	const page = 64 // what a subscriber holds at most (subscriptionPage)
	for i := 0; i < 300; i++ {
		if _, err := h.e.Scan(q.ID, []string{"hypothesis " + strconv.Itoa(i)}); err != nil {
			t.Fatal(err)
		}
	}
	last := h.e.LastSeq()
	if last-first+1 <= 2*page {
		t.Fatalf("only %d events written, want more than two pages", last-first+1)
	}
	want := first
	for want <= last {
		evs, err := sub.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 || len(evs) > page {
			t.Fatalf("a page of %d events, want 1..%d", len(evs), page)
		}
		for _, ev := range evs {
			if ev.Seq != want {
				t.Fatalf("event %d delivered, want %d", ev.Seq, want)
			}
			want++
		}
	}
}

// Await wakes on committed events without reading them: it stands at the
// newest, and its allocations do not grow with the events it passes.
func TestAwaitStandsAtTheNewestWithoutReading(t *testing.T) {
	h := newHarness(t, Options{})
	sub := h.e.Subscribe(h.e.LastSeq())
	defer sub.Close()
	emitDetailed(t, h.e, 300)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := sub.Await(context.Background())
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if sub.Last() != h.e.LastSeq() {
		t.Errorf("Await stands at %d, want the newest event %d", sub.Last(), h.e.LastSeq())
	}
	if n := after.Mallocs - before.Mallocs; n >= 100 {
		t.Errorf("Await past 300 events allocated %d times: it read them", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := sub.Await(ctx); err != context.Canceled {
		t.Errorf("Await with nothing new and ctx ended: %v, want %v", err, context.Canceled)
	}
}
