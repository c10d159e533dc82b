package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
)

// Emit appends ev to the outbox inside the transaction: it takes ev's
// seq from the bucket's sequence and adds ev to the transaction's group
// record (engine/records/eventgroup.go), which flushEvents writes before the commit.
func (t *txn) Emit(ev Event) error {
	seq, err := t.eventsBucket().NextSequence()
	if err != nil {
		return err
	}
	ev.Seq = seq
	ev.Time = t.now
	t.last = seq
	if t.grouped == records.GroupEvents {
		if err := t.flushEvents(); err != nil {
			return err
		}
	}
	g := t.group
	prev := t.groupLast
	if t.grouped == 0 {
		var room []byte
		if t.scratch != nil {
			room = t.groups.spare(max(256, t.groupRoom))
		} else {
			room = make([]byte, 0, max(256, t.groupRoom))
		}
		g = records.AppendGroupHead(room, seq, t.now)
		prev, t.groupFirst = seq, seq
	}
	s := t.e.store
	if g, s.eventJSON, err = records.AppendGroupEvent(g, prev, &ev, s.eventJSON); err != nil {
		return fmt.Errorf("BUG: encode event %d: %w", seq, err)
	}
	t.group, t.groupLast = g, seq
	t.grouped++
	return nil
}

// flushEvents writes the events emitted since the last flush as one group
// record, keyed by the first one's seq. Engine.write calls it once fn is
// done, before the commit; emit, when a group is full.
func (t *txn) flushEvents() error {
	if t.grouped == 0 {
		return nil
	}
	g := records.AppendGroupEnd(t.group)
	if t.scratch != nil {
		g = t.groups.claim(g)
	}
	t.group, t.grouped = nil, 0
	return t.eventsBucket().Put(t.Key8(t.groupFirst), g)
}

// eventsBucket is the outbox, kept for the transaction's emits: a tick
// emits a thousand events.
func (t *txn) eventsBucket() *store.Bucket {
	if t.events == nil {
		t.events = appendOnly(t.tx.Events())
	}
	return t.events
}

// sharedGroup is the event group record the writes of one group commit
// share (Store.commitGroup): each write's events are appended to it
// (engineWrite.run), and it is written once, before the commit, keyed
// by its first event's seq. A busy tick's thousand results, a few hundred
// to a commit, so leave a few group records instead of one each: a put
// and a key fewer per result, and the tick that prunes them a minute
// later deletes a few records instead of a thousand. A group holds one time
// for all its events, so
// the writes of one group commit take theirs from the first of them
// (now): they run one after the other in one transaction, milliseconds
// apart, and every one of them was queued before the first ran. It is
// used inside a write transaction only, which bbolt runs one at a time; a
// transaction rolled back takes it with it, and the writes that run again
// share a new one.
//
// A shared group is written once it holds sharedGroupBytes, and the
// writes after it start another: bbolt never splits a leaf of four
// records or fewer, whatever their size, so a few groups of a hundred
// kilobytes (a commit of 250 judged results) made one leaf of several
// hundred, written again by every commit that appended to it — the
// tick's among them, 25 % more bytes a tick in the tick benchmark. A
// group of a page at most is one leaf of its own, or shares one with up
// to three others.
type sharedGroup struct {
	tx                    *store.Tx // the transaction it is open in; nil: none
	now                   time.Time
	group                 []byte
	grouped               int
	groupFirst, groupLast uint64
	// pruned: a write of the transaction ran the retention prune a
	// tick left to it (pruneLater).
	pruned bool
}

// sharedGroupBytes is the size past which a shared group is written
// after the write that filled it (see sharedGroup): with that write's
// events a group stays within a 4 KiB page.
const sharedGroupBytes = 3 << 10

// open starts an empty shared group in tx.
func (g *sharedGroup) open(tx *store.Tx) { *g = sharedGroup{tx: tx} }

// in returns g if it is open in tx, nil if not (a write committed alone
// writes its own group).
func (g *sharedGroup) in(tx *store.Tx) *sharedGroup {
	if g.tx == nil || g.tx != tx {
		return nil
	}
	return g
}

// flush writes the shared group's events, if any, and closes it.
func (g *sharedGroup) flush() error {
	tx, n := g.tx, g.grouped
	first, rec := g.groupFirst, g.group
	*g = sharedGroup{}
	if tx == nil || n == 0 {
		return nil
	}
	return appendOnly(tx.Events()).Put(u64(first), records.AppendGroupEnd(rec))
}

// Events returns up to limit events with Seq > since, oldest first. It
// returns ErrEventsPruned if events after since were already pruned.
func (e *Engine) Events(since uint64, limit int) ([]Event, error) {
	if limit <= 0 {
		limit = 500
	}
	var out []Event
	err := e.store.view(func(tx *store.Tx) error {
		// At most the events up to the newest, the bucket's sequence: a
		// slice grown by appends allocated twice what a page holds, four
		// readers (printer, hub, MQTT, a tick's answer) a page each.
		if last := tx.Events().Sequence(); last > since {
			out = make([]Event, 0, min(uint64(limit), last-since))
		}
		var gap error
		err := records.EventsAfter(tx.Events().Cursor(), since, func(ev *Event) bool {
			if len(out) == 0 && since > 0 && ev.Seq > since+1 {
				gap = fmt.Errorf("events %d..%d: %w", since+1, ev.Seq-1, ErrEventsPruned)
				return false
			}
			out = append(out, *ev)
			return len(out) < limit
		})
		if gap != nil {
			out = nil
			return gap
		}
		if trim := trimmedThrough(tx); since > 0 && since < trim {
			out = nil
			return fmt.Errorf("events after %d: the outbox bound dropped some up to %d: %w", since, trim, ErrEventsPruned)
		}
		return err
	})
	return out, err
}

// LastSeq is the seq of the newest event.
func (e *Engine) LastSeq() uint64 {
	var s uint64
	_ = e.store.view(func(tx *store.Tx) error {
		s = tx.Events().Sequence()
		return nil
	})
	return s
}

// AckEvents records that the durable consumer name (e.g. "mqtt") has
// delivered every event up to seq. Events are never pruned past the lowest
// durable cursor, so a consumer that acknowledges only after its peer did
// (the MQTT broker's PUBACK) loses nothing across outages and reboots.
//
// It is an engine write (batch), not a bare transaction of the store:
// the questCache learns its commit, which writes no quest, and stays
// current. MQTT commits its cursor after every burst of events, so as a
// commit the cache did not learn it made the next tick read every active
// quest's record again.
func (e *Engine) AckEvents(name string, seq uint64) error {
	return e.batch(func(t *txn) error {
		return t.tx.Cursors().Put([]byte(name), u64(seq))
	}, nil)
}

// Cursor returns the acknowledged seq of a durable consumer (0 if none).
func (e *Engine) Cursor(name string) uint64 {
	var s uint64
	_ = e.store.view(func(tx *store.Tx) error {
		s = seqOf(tx.Cursors().Get([]byte(name)))
		return nil
	})
	return s
}

// pruneEvents drops events older than the retention window that every
// durable cursor has passed, applies the outbox bound (outbox.go), and says
// how many records it changed. Bounded per call so a tick stays cheap.
func (t *txn) pruneEvents(retention int) (int, error) {
	trimmed, err := t.trimOutbox(t.opt.OutboxMax)
	if err != nil {
		return 0, err
	}
	n, err := t.pruneRetention(retention)
	return n + trimmed, err
}

// pruneBatch bounds how many events one pruneRetention drops, so that a
// tick after a long outage stays cheap: the oldest go first, the rest at
// the next ticks.
const pruneBatch = 5000

// pruneRetention drops events older than the retention window that every
// durable cursor has passed, the oldest first, at most pruneBatch. A
// group record (engine/records/eventgroup.go) goes whole, once its newest event is old
// enough: the outbox keeps at least retention events, and up to a group's
// worth more.
//
// It deletes walking backwards from the newest record it drops: after a
// bbolt cursor deletes its element, the element before it is still where
// Prev finds it (a delete shifts only what follows), whereas a forward
// walk would skip one, so a forward prune had to search the tree from its
// root again for every event (First after each Delete).
func (t *txn) pruneRetention(retention int) (int, error) {
	b := t.tx.Events()
	last := b.Sequence()
	if retention <= 0 || last <= uint64(retention) {
		return 0, nil
	}
	limit := last - uint64(retention)
	cc := t.tx.Cursors().Cursor()
	for k, v := cc.First(); k != nil; k, v = cc.Next() {
		if s := seqOf(v); s < limit {
			limit = s
		}
	}
	c := b.Cursor()
	k, _ := c.First()
	if k == nil || seqOf(k) > limit {
		return 0, nil
	}
	oldest := seqOf(k)
	// Seqs are unique: at most pruneBatch events lie in this range (fewer
	// where the outbox bound dropped some already).
	limit = min(limit, oldest+pruneBatch-1)
	var v []byte
	if k, v = c.Seek(u64(limit + 1)); k == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	// The record found starts at or before limit; a group may end past
	// it, and then it stays, with every record after it.
	if k != nil {
		past, err := records.HoldsPast(k, v, limit)
		if err != nil {
			return 0, fmt.Errorf("prune events: %w", err)
		}
		if past {
			k, _ = c.Prev()
		}
	}
	n := 0
	for ; k != nil && seqOf(k) >= oldest; k, _ = c.Prev() {
		if seqOf(k) > limit {
			return n, fmt.Errorf("BUG: pruning events: cursor at %d, past %d", seqOf(k), limit)
		}
		if err := c.Delete(); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// hub wakes subscribers after a commit. It never blocks: each subscriber has
// a one-slot wake channel, and a wake-up that finds the slot full is merged
// with the one already waiting.
type hub struct {
	mu   sync.Mutex // guards subs
	subs map[*Subscription]struct{}
}

func (h *hub) publish(seq uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// subscriptionPage is how many events a subscription reads at a time. Each
// subscriber (the LEDs, the dashboard, MQTT) holds its page until it has
// handled it; a busy tick's pages of 256 verdicts with their facts were up
// to 1.8 MB live at a commit's collection, and so twice that in heap goal. 64
// reads a busy cycle's
// events in a few dozen more read transactions.
const subscriptionPage = 64

// Subscription delivers events in order, from a starting seq, reading them
// from the outbox. It is not safe for concurrent use by several goroutines.
type Subscription struct {
	e    *Engine
	wake chan struct{}
	next uint64 // last seq delivered
}

// Subscribe starts a subscription that delivers events with Seq > since.
// Use since = LastSeq() for only new events, 0 for everything retained.
func (e *Engine) Subscribe(since uint64) *Subscription {
	s := &Subscription{e: e, wake: make(chan struct{}, 1), next: since}
	e.hub.mu.Lock()
	e.hub.subs[s] = struct{}{}
	e.hub.mu.Unlock()
	return s
}

// Next blocks until events after the last delivered one exist, or ctx ends.
func (s *Subscription) Next(ctx context.Context) ([]Event, error) {
	for {
		evs, err := s.e.Events(s.next, subscriptionPage)
		if err != nil {
			return nil, err
		}
		if len(evs) > 0 {
			s.next = evs[len(evs)-1].Seq
			return evs, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.wake:
		}
	}
}

// Close removes the subscription.
func (s *Subscription) Close() {
	s.e.hub.mu.Lock()
	delete(s.e.hub.subs, s)
	s.e.hub.mu.Unlock()
}
