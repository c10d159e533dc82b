package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/questbox/questbox/engine/outbox"
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
)

// emitN appends n events of kind in one transaction.
func emitN(t testing.TB, e *Engine, kind string, n int) {
	t.Helper()
	err := e.update(func(tx *txn) error {
		for range n {
			if err := tx.Emit(Event{Kind: kind, Outcome: "test"}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("emit: %v", err)
	}
}

func TestOpenOutboxStartsAtTheNewestEventOnce(t *testing.T) {
	h := newHarness(t, Options{})
	emitN(t, h.e, KindDevice, 5)
	o, err := h.e.OpenOutbox("mqtt")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if got := o.Acked(); got != 5 {
		t.Fatalf("a new consumer starts at %d, want 5 (the newest event)", got)
	}
	emitN(t, h.e, KindNode, 3)
	if err := o.Ack(6); err != nil {
		t.Fatal(err)
	}
	h.restart()
	o2, err := h.e.OpenOutbox("mqtt")
	if err != nil {
		t.Fatal(err)
	}
	defer o2.Close()
	if got := o2.Acked(); got != 6 {
		t.Fatalf("reopened consumer at %d, want 6 (its durable cursor)", got)
	}
	evs, err := o2.Read(o2.Acked(), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].Seq != 7 || evs[1].Seq != 8 {
		t.Fatalf("read %v, want seqs 7 and 8", seqs(evs))
	}
}

func TestOutboxNotifyAfterCommit(t *testing.T) {
	h := newHarness(t, Options{})
	o, err := h.e.OpenOutbox("mqtt")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	emitN(t, h.e, KindDevice, 1)
	<-o.Notify() // the commit woke it; a lost wake-up hangs the test
	evs, err := o.Read(0, 0)
	if err != nil || len(evs) != 1 {
		t.Fatalf("read %v, %v; want one event", seqs(evs), err)
	}
}

func TestRetentionKeepsWhatAConsumerHasNotAcked(t *testing.T) {
	h := newHarness(t, Options{EventRetention: 100})
	h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal }) // an idle box does not tick at all
	o, err := h.e.OpenOutbox("mqtt")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	for range 30 { // 30 writes of 10: retention prunes a write's events whole
		emitN(t, h.e, KindNode, 10)
	}
	h.tick()
	start := o.Acked()
	evs, err := o.Read(0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) < 300 || evs[0].Seq != start+1 {
		t.Fatalf("after a tick the outbox starts at %d with %d events; want every unacknowledged one", evs[0].Seq, len(evs))
	}
	if err := h.e.RemoveConsumer("mqtt"); err != nil {
		t.Fatal(err)
	}
	commits := h.store.Commits()
	if err := h.e.RemoveConsumer("mqtt"); err != nil || h.store.Commits() != commits {
		t.Fatalf("removing a consumer that is gone: %v, %d commits; want nil and none", err, h.store.Commits()-commits)
	}
	h.tick()
	evs, _ = o.Read(0, 1000)
	if len(evs) < 100 || len(evs) > 110 {
		t.Fatalf("after the consumer was removed %d events are kept, want the retention (100) and at most the rest of a write's (10)", len(evs))
	}
}

func TestOutboxBoundDropsOnlyNodeQuestDeviceEvents(t *testing.T) {
	h := newHarness(t, Options{EventRetention: 100, OutboxMax: 150})
	h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal }) // an idle box does not tick at all
	o, err := h.e.OpenOutbox("mqtt")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	// 400 events while the peer is away: node, verdict, consent, quest,
	// device in turn.
	kinds := []string{KindNode, KindVerdict, KindConsent, KindQuest, KindDevice}
	for range 80 {
		for _, k := range kinds {
			emitN(t, h.e, k, 1)
		}
	}
	h.tick() // the tick may add events of its own; the bound counts from the newest
	last := h.e.LastSeq()
	evs, err := o.Read(0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	bound := last - 150
	var verdicts, consents int
	prev := uint64(0)
	for _, ev := range evs {
		if ev.Seq <= prev {
			t.Fatalf("read out of order: %d after %d", ev.Seq, prev)
		}
		prev = ev.Seq
		if ev.Seq <= bound && outbox.Droppable(ev.Kind) {
			t.Errorf("event %d (%s) is past the bound (%d) and was not dropped", ev.Seq, ev.Kind, bound)
		}
		switch ev.Kind {
		case KindVerdict:
			verdicts++
		case KindConsent:
			consents++
		}
	}
	if verdicts != 80 || consents != 80 {
		t.Fatalf("kept %d verdict and %d consent events, want all 80 of each", verdicts, consents)
	}
	// A reader of the retention window sees no hole; one asking for
	// events before the dropped ones learns they are gone.
	if _, err := h.e.Events(last-100, 0); err != nil {
		t.Fatalf("events in the retention window: %v", err)
	}
	if _, err := h.e.Events(10, 0); !errors.Is(err, ErrEventsPruned) {
		t.Fatalf("events before the dropped ones: got %v, want ErrEventsPruned", err)
	}
	// A second tick with nothing new to drop writes nothing more.
	before := h.e.LastSeq()
	h.tick()
	if got := h.e.LastSeq(); got != before {
		t.Fatalf("idle tick emitted events: %d -> %d", before, got)
	}
	// Once delivered, retention prunes as usual.
	if err := o.Ack(last); err != nil {
		t.Fatal(err)
	}
	h.tick()
	evs, _ = o.Read(0, 10000)
	if len(evs) > 110 {
		t.Fatalf("after the ack %d events are kept, want about the retention (100)", len(evs))
	}
}

func seqs(evs []Event) []uint64 {
	out := make([]uint64, len(evs))
	for i, ev := range evs {
		out[i] = ev.Seq
	}
	return out
}

// eventSeqs is every event's seq in the outbox, oldest first.
func eventSeqs(t testing.TB, e *Engine) []uint64 {
	t.Helper()
	var out []uint64
	for _, r := range eventRecords(t, e) {
		out = append(out, r.seqs...)
	}
	return out
}

// eventRecord is one record of the events bucket: its key and the seqs of
// its events.
type eventRecord struct {
	key  uint64
	seqs []uint64
}

// eventRecords is every record of the outbox, oldest first.
func eventRecords(t testing.TB, e *Engine) []eventRecord {
	t.Helper()
	var out []eventRecord
	err := e.store.view(func(tx *store.Tx) error {
		return tx.Events().ForEach(func(k, v []byte) error {
			r := eventRecord{key: seqOf(k)}
			_, err := records.EachEvent(k, v, 0, func(ev *Event) bool { r.seqs = append(r.seqs, ev.Seq); return true })
			out = append(out, r)
			return err
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// emitWrites appends n events of kind in writes of the sizes given, in
// turn (a write of more than records.GroupEvents makes several records).
func emitWrites(t testing.TB, e *Engine, kind string, n int, sizes ...int) {
	t.Helper()
	for i := 0; n > 0; i++ {
		k := min(sizes[i%len(sizes)], n)
		emitN(t, e, kind, k)
		n -= k
	}
}

// dropEvents drops the events whose seq drop says, as the outbox bound
// does: a group is written again without them, keyed by its first kept
// seq.
func dropEvents(t testing.TB, e *Engine, drop func(seq uint64) bool) {
	t.Helper()
	err := e.update(func(tx *txn) error {
		b := tx.tx.Events()
		type rewrite struct {
			key  []byte
			keep []Event
		}
		var rewrites []rewrite
		err := b.ForEach(func(k, v []byte) error {
			var keep []Event
			all := 0
			_, err := records.EachEvent(k, v, 0, func(ev *Event) bool {
				all++
				if !drop(ev.Seq) {
					keep = append(keep, *ev)
				}
				return true
			})
			if len(keep) < all {
				rewrites = append(rewrites, rewrite{slices.Clone(k), keep})
			}
			return err
		})
		if err != nil {
			return err
		}
		for _, r := range rewrites {
			if err := b.Delete(r.key); err != nil {
				return err
			}
			if len(r.keep) == 0 {
				continue
			}
			g, err := records.EncodeGroup(r.keep)
			if err != nil {
				return err
			}
			if err := b.Put(u64(r.keep[0].Seq), g); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPruneRetentionDropsExactlyTheOldest prunes an outbox of several
// thousand pages' worth of events, in records of every size (a write of
// one event, of hundreds, of more than a group holds), with gaps (as the
// outbox bound leaves them), and checks after every call that exactly the
// oldest records whose events are all up to the window and the cursors
// went, at most outbox.PruneBatch seqs' worth a call: the prune deletes walking a
// cursor backwards, and a cursor that skipped or revisited an element
// after a delete would show here. No event newer than the window goes,
// and the events kept past it are at most the rest of one record's.
func TestPruneRetentionDropsExactlyTheOldest(t *testing.T) {
	for _, c := range []struct {
		name      string
		events    int
		sizes     []int // the sizes of the writes, in turn
		retention int
		cursor    uint64 // a durable consumer's ack (0: none)
	}{
		{"one batch", 3000, []int{1, 7, 300, 50}, 1000, 0},
		{"several batches", 13_000, []int{1, 7, 300, 2000, 50, 3}, 500, 0},
		{"held by a cursor", 13_000, []int{1, 7, 300, 2000, 50, 3}, 500, 7_777},
		{"nothing past the window", 400, []int{1, 7, 300, 50}, 1000, 0},
		{"one event", 2, []int{1}, 1, 0},
		{"one write", 3000, []int{3000}, 1000, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, Options{})
			emitWrites(t, h.e, KindDevice, c.events, c.sizes...)
			// Gaps in the middle, as the outbox bound drops events.
			dropEvents(t, h.e, func(s uint64) bool { return s >= 100 && s < uint64(c.events) && (s-100)%37 == 0 })
			if c.cursor > 0 {
				if err := h.e.AckEvents("mqtt", c.cursor); err != nil {
					t.Fatal(err)
				}
			}
			last := h.e.LastSeq()
			limit := last - uint64(min(c.retention, int(last)))
			if c.cursor > 0 {
				limit = min(limit, c.cursor)
			}
			want := eventRecords(t, h.e)
			for round := 0; ; round++ {
				var n int
				if err := h.e.update(func(tx *txn) error {
					var err error
					n, err = outbox.PruneRetention(tx.tx, c.retention)
					return err
				}); err != nil {
					t.Fatal(err)
				}
				// What must go: the oldest records whose events are all
				// up to limit, none of them outbox.PruneBatch seqs or more past
				// the oldest event.
				drop := 0
				for drop < len(want) {
					newest := want[drop].seqs[len(want[drop].seqs)-1]
					if newest > limit || newest >= want[0].seqs[0]+outbox.PruneBatch {
						break
					}
					drop++
				}
				want = want[drop:]
				got := eventRecords(t, h.e)
				if n != drop || !slices.EqualFunc(got, want, func(a, b eventRecord) bool { return a.key == b.key && slices.Equal(a.seqs, b.seqs) }) {
					t.Fatalf("round %d: pruned %d, want %d; %d records left (first %v), want %d (first %v)",
						round, n, drop, len(got), got[:min(3, len(got))], len(want), want[:min(3, len(want))])
				}
				if drop == 0 {
					break
				}
			}
			// Exact to a record: nothing newer than limit went, and what
			// is kept at or below limit is the rest of one record, the
			// one that holds limit+1.
			seqs := eventSeqs(t, h.e)
			if seqs[len(seqs)-1] != last {
				t.Errorf("the newest event %d must stay; the newest left is %d", last, seqs[len(seqs)-1])
			}
			if len(want) > 0 {
				if first := want[0].seqs; first[0] <= limit && first[len(first)-1] <= limit {
					t.Errorf("record %d, whose events are all up to %d, must be pruned", want[0].key, limit)
				}
				for _, r := range want[1:] {
					if r.seqs[0] <= limit {
						t.Errorf("record %d starts at or below %d, yet it is not the oldest left", r.key, limit)
					}
				}
			}
		})
	}
}

// BenchmarkPruneRetention is the retention prune of a tick that
// dispatched a thousand nodes: a thousand events past the window, in an
// outbox that holds 10,000.
func BenchmarkPruneRetention(b *testing.B) {
	h := newHarness(b, Options{})
	const retention = 10_000
	emitWrites(b, h.e, KindDevice, retention, 1000)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		emitN(b, h.e, KindDevice, 1000)
		err := h.e.update(func(tx *txn) error {
			b.StartTimer()
			n, err := outbox.PruneRetention(tx.tx, retention)
			b.StopTimer()
			if err == nil && n != 1 {
				err = fmt.Errorf("pruned %d records, want 1 (the thousand events of one write)", n)
			}
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// A tick that starts runs leaves its retention prune to the group commit
// of their results, which comes anyway: the tick deletes no record at the
// outbox's old end, the prune adds no commit, and once the results are
// in, the outbox keeps its retention as before.
func TestTickLeavesTheRetentionPruneToItsResults(t *testing.T) {
	p := &held{}
	h := newHarness(t, Options{EventRetention: 100, Providers: map[string]Provider{"p": p}})
	h.quest(func(s *QuestSpec) { s.Provider, s.Mode = "p", ModeSolo })
	for range 30 { // 30 writes of 10: retention prunes a write's events whole
		emitN(t, h.e, KindNode, 10)
	}
	oldest := func() uint64 {
		t.Helper()
		evs, err := h.e.Events(0, 1)
		if err != nil || len(evs) != 1 {
			t.Fatalf("events: %v, %v", evs, err)
		}
		return evs[0].Seq
	}
	first := oldest()
	let := holdRuns(t, p)
	rep, err := h.e.Tick(context.Background())
	if err != nil || len(rep.Dispatched) != 1 {
		t.Fatalf("tick: %v, dispatched %v", err, rep.Dispatched)
	}
	if got := oldest(); got != first {
		t.Fatalf("the tick that started a run pruned the outbox to %d (from %d)", got, first)
	}
	commits := h.store.Commits()
	let()
	h.e.Wait()
	if n := h.store.Commits() - commits; n != 1 {
		t.Fatalf("the result and the prune took %d commits, want the result's one", n)
	}
	last := h.e.LastSeq()
	if got := oldest(); got <= last-110 || got > last-100+1 {
		t.Fatalf("after the result the outbox starts at %d of %d, want the retention (100) and at most the rest of a write's (10)", got, last)
	}
	if due := h.e.pruneDue.Load(); due != 0 {
		t.Fatalf("the prune the tick left is still due (%d) after its result's commit", due)
	}
}

// A retention prune that fails in the commit of a tick's results (an
// outbox record that does not decode) fails that write's transaction
// only: the result is written alone, without the prune, and the prune is
// no longer due.
func TestFailedPruneAfterATickLosesNoResult(t *testing.T) {
	p := &held{}
	h := newHarness(t, Options{EventRetention: 100, Providers: map[string]Provider{"p": p}})
	q := h.quest(func(s *QuestSpec) { s.Provider, s.Mode = "p", ModeSolo })
	for range 30 {
		emitN(t, h.e, KindNode, 10)
	}
	kept := map[string][]byte{}
	// Every record of the outbox but the newest stops decoding, as
	// damage would, and is put back before the harness verifies.
	breakOrMend := func(broken bool) {
		t.Helper()
		err := h.store.update(func(tx *store.Tx) error {
			b := tx.Events()
			last, _ := b.Cursor().Last()
			var keys [][]byte
			_ = b.ForEach(func(k, v []byte) error {
				if _, ok := kept[string(k)]; ok || broken && !slices.Equal(k, last) {
					keys = append(keys, slices.Clone(k))
					if broken {
						kept[string(k)] = slices.Clone(v)
					}
				}
				return nil
			})
			for _, k := range keys {
				v := []byte{store.GroupForm, 0xff}
				if !broken {
					v = kept[string(k)]
				}
				if err := b.Put(k, v); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	let := holdRuns(t, p)
	rep, err := h.e.Tick(context.Background())
	if err != nil || len(rep.Dispatched) != 1 {
		t.Fatalf("tick: %v, dispatched %v", err, rep.Dispatched)
	}
	breakOrMend(true)
	t.Cleanup(func() { breakOrMend(false) })
	commits := h.store.Commits()
	let()
	h.e.Wait()
	if n := h.store.Commits() - commits; n != 1 {
		t.Fatalf("the result took %d commits, want its own one", n)
	}
	if due := h.e.pruneDue.Load(); due != 0 {
		t.Fatalf("the prune that failed is still due (%d)", due)
	}
	if n, err := h.e.Unrecorded(); n != 0 {
		t.Fatalf("%d results unrecorded: %v", n, err)
	}
	if n := h.node(rep.Dispatched[0]); n.Status != Deferred || h.questNow(q.ID).Running != "" {
		t.Fatalf("node %s is %s after its run found the network down, want deferred", n.ID, n.Status)
	}
}

// holdRuns holds the runs p is asked for until let is called (or the
// test ends, so that a failure before it leaves no run waiting).
func holdRuns(t *testing.T, p *held) (let func()) {
	release := p.arm()
	var once sync.Once
	let = func() { once.Do(func() { close(release) }) }
	t.Cleanup(let)
	return let
}
