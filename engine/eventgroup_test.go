package engine

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/questbox/questbox/engine/outbox"
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/engine/storetest"
)

// emitDetailed appends n events in one write, each with its seq as its
// detail, so a reader can check that fields travel with their seq.
func emitDetailed(t testing.TB, e *Engine, n int) {
	t.Helper()
	next := e.LastSeq() + 1
	err := e.update(func(tx *txn) error {
		for i := range n {
			kind := KindNode
			if i%5 == 4 {
				kind = KindVerdict
			}
			if err := tx.Emit(Event{Kind: kind, Detail: strconv.FormatUint(next+uint64(i), 10)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("emit: %v", err)
	}
}

// putSingleEvents writes n events as schema 7 did, one JSON record each
// under its seq, after the newest.
func putSingleEvents(t testing.TB, s *Store, n int, at time.Time) {
	t.Helper()
	err := s.update(func(tx *store.Tx) error {
		b := tx.Events()
		for range n {
			seq, err := b.NextSequence()
			if err != nil {
				return err
			}
			raw, err := records.AppendEvent(nil, &Event{Seq: seq, Time: at, Kind: KindNode, Detail: strconv.FormatUint(seq, 10)})
			if err != nil {
				return err
			}
			if err := b.Put(u64(seq), raw); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestEventsResumeFromAnySeq: a reader that resumes from any seq — a seq
// inside a group, a group's first or last event, the last single record
// of an older store, a seq the retention pruned, one in a gap the outbox
// bound left, the newest — gets exactly the events after it, in order,
// each with its own fields, none lost or repeated, whichever page size it
// reads with: Engine.Events (the API's since, Last-Event-ID), Outbox.Read
// (MQTT) and a Subscription (the dashboard, the box).
func TestEventsResumeFromAnySeq(t *testing.T) {
	h := newHarness(t, Options{})
	putSingleEvents(t, h.store, 6, h.clock.Now().UTC()) // 1..6: a schema 7 store's records
	for _, n := range []int{1, 3, 7, 1, 40, 1100, 2, 25} {
		emitDetailed(t, h.e, n)
	}
	// Records: 0..5 single, then groups 6 (1 event), 7 (3), 8 (7), 9 (1),
	// 10 (40), 11 and 12 (1,024 and 76: one write), 13 (2), 14 (25).
	recs := eventRecords(t, h.e)
	if len(recs) != 15 || len(recs[11].seqs) != records.GroupEvents {
		t.Fatalf("fixture: %d records, want 15 with a full group", len(recs))
	}
	// Gaps, as the outbox bound drops node events: inside a group, at a
	// group's first and last event, and a whole group (the write of one).
	gone := map[uint64]bool{recs[8].seqs[0]: true, recs[8].seqs[2]: true, recs[9].seqs[0]: true,
		recs[10].seqs[0]: true, recs[10].seqs[len(recs[10].seqs)-1]: true}
	dropEvents(t, h.e, func(s uint64) bool { return gone[s] })
	// Retention prunes the oldest records whole: three single ones.
	last := h.e.LastSeq()
	if err := h.e.update(func(tx *txn) error { _, err := outbox.PruneRetention(tx.tx, int(last)-3); return err }); err != nil {
		t.Fatal(err)
	}
	all := eventSeqs(t, h.e)
	if all[0] != 4 || all[len(all)-1] != last {
		t.Fatalf("fixture: events %d..%d; want 4..%d", all[0], all[len(all)-1], last)
	}
	after := func(since uint64) []uint64 {
		i, _ := slices.BinarySearch(all, since+1)
		return all[i:]
	}
	check := func(t *testing.T, what string, since uint64, evs []Event) {
		t.Helper()
		if got, want := seqs(evs), after(since); !slices.Equal(got, want) {
			t.Fatalf("%s after %d: %d events %v...; want %d %v...", what, since, len(got), got[:min(5, len(got))], len(want), want[:min(5, len(want))])
		}
		for _, ev := range evs {
			if ev.Detail != strconv.FormatUint(ev.Seq, 10) || ev.Time.IsZero() || ev.Kind == "" {
				t.Fatalf("%s after %d: event %d came with detail %q, time %v, kind %q", what, since, ev.Seq, ev.Detail, ev.Time, ev.Kind)
			}
		}
	}
	// Every since, in pages of 1000; some in pages of 1 and 3 too.
	for since := uint64(0); since <= last+1; since++ {
		limits := []int{1000}
		if since%97 == 0 || since+1 == all[0] || slices.Contains(all, since) && !slices.Contains(all, since+1) || gone[since] || gone[since+1] {
			limits = append(limits, 1, 3)
		}
		for _, limit := range limits {
			name := "since " + strconv.FormatUint(since, 10) + " limit " + strconv.Itoa(limit)
			var got []Event
			for from := since; ; {
				evs, err := h.e.outboxRead(from, limit)
				if err != nil {
					t.Fatalf("%s: Outbox.Read: %v", name, err)
				}
				if len(evs) == 0 {
					break
				}
				if len(evs) > limit {
					t.Fatalf("%s: Outbox.Read gave %d events", name, len(evs))
				}
				got = append(got, evs...)
				from = evs[len(evs)-1].Seq
			}
			check(t, "Outbox.Read "+name, since, got)

			got = nil
			evs, err := h.e.Events(since, limit)
			// Engine.Events refuses to skip: after since comes since+1
			// or nothing, else the reader is told it lost events.
			if hole := since > 0 && since < last && !slices.Contains(all, since+1); hole {
				if !errors.Is(err, ErrEventsPruned) {
					t.Fatalf("%s: Engine.Events = %d events, %v; want ErrEventsPruned", name, len(evs), err)
				}
				continue
			}
			for from := since; ; {
				if err != nil {
					t.Fatalf("%s: Engine.Events after %d: %v", name, from, err)
				}
				if len(evs) == 0 {
					break
				}
				got = append(got, evs...)
				from = evs[len(evs)-1].Seq
				if !slices.Contains(all, from+1) {
					// The next page starts in a gap the outbox bound left:
					// a reader past it (Outbox.Read) goes on.
					evs, err = h.e.outboxRead(from, limit)
				} else {
					evs, err = h.e.Events(from, limit)
				}
			}
			check(t, "Engine.Events "+name, since, got)
		}
	}
	// A subscription from inside a group reads to the newest, in order.
	for _, since := range []uint64{all[0] - 1, all[1], recs[11].seqs[5], recs[11].seqs[records.GroupEvents-1], last - 1} {
		sub := h.e.Subscribe(since)
		var got []Event
		for len(got) == 0 || got[len(got)-1].Seq < last {
			evs, err := h.e.outboxRead(sub.Last(), outbox.SubscriptionPage)
			if err != nil || len(evs) == 0 {
				t.Fatalf("subscription after %d: %v, %d events", since, err, len(evs))
			}
			if !slices.Contains(all, sub.Last()+1) {
				// a gap: as Follow goes on, after it
				sub.Close()
				sub = h.e.Subscribe(evs[len(evs)-1].Seq)
				got = append(got, evs...)
				continue
			}
			if evs, err = sub.Next(t.Context()); err != nil {
				t.Fatalf("subscription after %d: %v", since, err)
			}
			got = append(got, evs...)
		}
		sub.Close()
		check(t, "Subscription", since, got)
	}
}

// outboxRead is Outbox.Read without a consumer.
func (e *Engine) outboxRead(since uint64, limit int) ([]Event, error) {
	return (&Outbox{e: e}).Read(since, limit)
}

// TestOutboxBoundRewritesAGroup: the outbox bound drops the node events of
// a group and keeps its verdicts, each under its own seq, and the group's
// events past the bound; a consumer reads what is left in order, and a
// reader of the retention window sees no hole.
func TestOutboxBoundRewritesAGroup(t *testing.T) {
	h := newHarness(t, Options{EventRetention: 100, OutboxMax: 150})
	o, err := h.e.OpenOutbox("mqtt") // at 0: everything is undelivered
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	emitDetailed(t, h.e, 300) // one group; every fifth a verdict
	var changed int
	if err := h.e.update(func(tx *txn) error {
		changed, err = tx.trimOutbox(150)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if changed != 2 { // the group rewritten, the trim mark
		t.Errorf("trimOutbox changed %d records, want 2", changed)
	}
	evs, err := o.Read(0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var want []uint64
	for s := uint64(1); s <= 300; s++ {
		if s > 150 || s%5 == 0 {
			want = append(want, s)
		}
	}
	if got := seqs(evs); !slices.Equal(got, want) {
		t.Fatalf("after the bound: %v; want the verdicts up to 150 and everything after", got)
	}
	for _, ev := range evs {
		if ev.Detail != strconv.FormatUint(ev.Seq, 10) || (ev.Seq%5 == 0) != (ev.Kind == KindVerdict) {
			t.Fatalf("event %d came back as %+v", ev.Seq, ev)
		}
	}
	if recs := eventRecords(t, h.e); len(recs) != 1 || recs[0].key != 5 {
		t.Errorf("records after the bound: %v; want the one group, keyed by its first kept seq 5", recs)
	}
	if _, err := h.e.Events(4, 10); !errors.Is(err, ErrEventsPruned) {
		t.Errorf("Events after 4: %v; want ErrEventsPruned", err)
	}
	if evs, err := h.e.Events(200, 10); err != nil || len(evs) != 10 || evs[0].Seq != 201 {
		t.Errorf("Events after 200 (in the retention window): %v, %v", seqs(evs), err)
	}
}

// TestSalvageDropsARottenEventGroup: bit rot inside a group on a sound
// page: salvage names the record and drops it, the result verifies,
// the outbox reads past the loss, and the next event does not take a seq
// the lost group had.
func TestSalvageDropsARottenEventGroup(t *testing.T) {
	h := newHarness(t, Options{})
	emitDetailed(t, h.e, 3)
	emitDetailed(t, h.e, 400) // seqs 4..403: the newest record, on a page of its own
	last := h.e.LastSeq()
	h.close()
	dir := h.dir
	damageFile(t, dir, func(f *storetest.File) error {
		return f.Rewrite(storetest.Seq(4), []byte("\x0220"), []byte("\x0229"), "events")
	})
	s, err := OpenStore(dir, StoreOptions{Check: true})
	if err != nil {
		t.Fatalf("pages are sound: %v", err)
	}
	_, err = s.Verify()
	s.Close()
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "event record 4 does not decode") {
		t.Fatalf("verify: %v; want the store corrupt, naming the rotten group", err)
	}
	rep, err := Salvage(dir, time.Now())
	if err != nil || rep.Healthy || rep.Verify != "ok" {
		t.Fatalf("salvage: %+v, %v; want the record dropped and a store that verifies", rep, err)
	}
	if damage := strings.Join(rep.Damage, "; "); !strings.Contains(damage, `bucket events: record #4 is damaged`) {
		t.Errorf("salvage found %q; want the rotten group named", damage)
	}
	h.open()
	evs, err := (&Outbox{e: h.e}).Read(0, 100)
	if err != nil || !slices.Equal(seqs(evs), []uint64{1, 2, 3}) {
		t.Fatalf("after salvage: %v, %v; want the first write's events", seqs(evs), err)
	}
	emitDetailed(t, h.e, 1)
	if got := h.e.LastSeq(); got <= last {
		t.Errorf("the next event took seq %d, not past the lost group's %d", got, last)
	}
}

// TestGoldenStoresEvents: the outbox of schema 7's golden store (one JSON
// record per event) and of schema 8's (one group per write) read back
// whole and in order, read-only and after a writing open migrated it.
func TestGoldenStoresEvents(t *testing.T) {
	for _, c := range []struct {
		schema int
		groups bool // some record holds several events
	}{{7, false}, {8, true}} {
		t.Run("schema"+strconv.Itoa(c.schema), func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "golden", "schema"+strconv.Itoa(c.schema), "questbox.db"))
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, StoreFile), raw, 0o600); err != nil {
				t.Fatal(err)
			}
			for _, readOnly := range []bool{true, false} {
				s, err := OpenStore(dir, StoreOptions{ReadOnly: readOnly, Check: true})
				if err != nil {
					t.Fatal(err)
				}
				e, err := New(s, Options{})
				if err != nil {
					t.Fatal(err)
				}
				evs, err := e.Events(0, 0)
				last := e.LastSeq()
				var grouped bool
				_ = s.view(func(tx *store.Tx) error {
					return tx.Events().ForEach(func(_, v []byte) error {
						grouped = grouped || records.IsGroup(v)
						return nil
					})
				})
				e.Shutdown(0)
				s.Close()
				if err != nil || last < 5 || len(evs) != int(last) {
					t.Fatalf("read-only %v: %d events, newest %d, %v; want every event from 1", readOnly, len(evs), last, err)
				}
				for i, ev := range evs {
					if ev.Seq != uint64(i+1) || ev.Kind == "" || ev.Time.IsZero() {
						t.Fatalf("read-only %v: event %d: %+v", readOnly, i+1, ev)
					}
				}
				if grouped != c.groups {
					t.Errorf("read-only %v: group records %v, want %v", readOnly, grouped, c.groups)
				}
			}
		})
	}
}

// BenchmarkTickEventRecord is what the outbox takes of a tick that
// dispatches 1,000 nodes on a 10,000-node store: the bytes of its event
// records and their keys (event-B/tick), their number, and what the same
// events took as schema 7's single JSON records (event-json-B/tick). A
// bbolt leaf element (16 bytes) per record comes on top of both.
func BenchmarkTickEventRecord(b *testing.B) {
	p := &held{}
	_, e := benchEngine(b, 1000, 10_000, p)
	var group, single, recs int
	for range b.N {
		from := e.LastSeq()
		release := p.arm()
		if _, err := e.Tick(b.Context()); err != nil {
			b.Fatal(err)
		}
		err := e.store.view(func(tx *store.Tx) error { // before the runs' results
			c := tx.Events().Cursor()
			for k, v := records.SeekEvents(c, from); k != nil; k, v = c.Next() {
				if seqOf(k) <= from {
					continue
				}
				recs++
				group += len(k) + len(v)
				_, err := records.EachEvent(k, v, from, func(ev *Event) bool {
					raw, _ := records.AppendEvent(nil, ev)
					single += 8 + len(raw)
					return true
				})
				if err != nil {
					return err
				}
			}
			return nil
		})
		close(release)
		e.Wait()
		if err != nil {
			b.Fatal(err)
		}
		benchReset(b, e)
	}
	b.ReportMetric(float64(group)/float64(b.N), "event-B/tick")
	b.ReportMetric(float64(single)/float64(b.N), "event-json-B/tick")
	b.ReportMetric(float64(recs)/float64(b.N), "event-records/tick")
}

// TestOverlappingGroupsGiveEachEventOnce: were a salvage to bring back an
// older copy of a group beside the group the outbox bound rewrote from it
// (under a later key), a reader still gets each seq once, in order.
func TestOverlappingGroupsGiveEachEventOnce(t *testing.T) {
	h := newHarness(t, Options{})
	emitDetailed(t, h.e, 10) // 1..10, one group
	err := h.store.update(func(tx *store.Tx) error {
		var evs []Event
		for s := uint64(5); s <= 12; s++ {
			evs = append(evs, Event{Seq: s, Time: h.clock.Now().UTC(), Kind: KindNode, Detail: strconv.FormatUint(s, 10)})
		}
		g, err := records.EncodeGroup(evs)
		if err != nil {
			return err
		}
		if err := tx.Events().SetSequence(12); err != nil {
			return err
		}
		return tx.Events().Put(u64(5), g)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, since := range []uint64{0, 3, 6, 11} {
		evs, err := h.e.outboxRead(since, 100)
		var want []uint64
		for s := since + 1; s <= 12; s++ {
			want = append(want, s)
		}
		if err != nil || !slices.Equal(seqs(evs), want) {
			t.Errorf("after %d: %v, %v; want %v", since, seqs(evs), err, want)
		}
	}
}

// A page of events is allocated once, for no more events than the page
// or the store holds past since: four readers (printer, hub, MQTT, a
// tick's answer) read a busy tick's thousands of events a page at a time,
// and slices grown by appends allocated twice what they held.
func TestEventsPageIsAllocatedOnce(t *testing.T) {
	h := newHarness(t, Options{})
	emitDetailed(t, h.e, 50)
	last := h.e.LastSeq()
	for _, c := range []struct {
		since     uint64
		limit     int
		want, cap int
	}{{0, 64, 50, 50}, {0, 20, 20, 20}, {last - 3, 64, 3, 3}, {last, 64, 0, 0}} {
		evs, err := h.e.Events(c.since, c.limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != c.want || cap(evs) != c.cap {
			t.Errorf("Events(%d, %d): %d events in room for %d; want %d in %d", c.since, c.limit, len(evs), cap(evs), c.want, c.cap)
		}
	}
}
