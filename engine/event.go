package engine

import (
	"fmt"
	"time"

	"github.com/questbox/questbox/engine/outbox"
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
	var out []Event
	err := e.store.view(func(tx *store.Tx) error {
		var err error
		out, err = outbox.Read(tx, since, limit)
		return err
	})
	return out, err
}

// ReadEvents returns, without waiting, up to limit events after since as
// a Batch (outbox.ReadBatch): when events after since were pruned it
// returns a Skipped batch whose Last is the newest event, instead of
// ErrEventsPruned. Other errors are the store failing.
func (e *Engine) ReadEvents(since uint64, limit int) (Batch, error) {
	return outbox.ReadBatch(e, since, limit)
}

// Subscribe starts a subscription that delivers events with Seq > since.
// Use since = LastSeq() for only new events, 0 for everything retained.
func (e *Engine) Subscribe(since uint64) *Subscription { return e.hub.Subscribe(e, since) }

// Newest is the seq of the newest event, or why the store could not say.
func (e *Engine) Newest() (uint64, error) {
	var s uint64
	err := e.store.view(func(tx *store.Tx) error {
		s = tx.Events().Sequence()
		return nil
	})
	return s, err
}

// LastSeq is the seq of the newest event (Newest, 0 when the store
// cannot say).
func (e *Engine) LastSeq() uint64 {
	s, _ := e.Newest()
	return s
}

// AckEvents records that the durable consumer name (e.g. "mqtt") has
// delivered every event up to seq. Events are never pruned past the lowest
// durable cursor, so a consumer that acknowledges only after its peer did
// (the MQTT broker's PUBACK) loses nothing across outages and reboots.
//
// It is an engine write (batch), not a bare transaction of the store:
// the tickmem.QuestCache learns its commit, which writes no quest, and stays
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
// durable cursor has passed, applies the outbox bound (outbox.Trim), and
// says how many records it changed. Bounded per call so a tick stays
// cheap.
func (t *txn) pruneEvents(retention int) (int, error) {
	trimmed, err := t.trimOutbox(t.opt.OutboxMax)
	if err != nil {
		return 0, err
	}
	n, err := outbox.PruneRetention(t.tx, retention)
	return n + trimmed, err
}

// trimOutbox applies the outbox bound (outbox.Trim), warns when it
// dropped undelivered events, and returns how many records it changed
// (0: it wrote nothing).
func (t *txn) trimOutbox(bound int) (int, error) {
	tr, err := outbox.Trim(t.tx, bound)
	if err != nil {
		return 0, err
	}
	if tr.Dropped > 0 {
		t.e.log.Warn("outbox bound reached: dropped undelivered node/quest/device events (verdict and consent events are kept)",
			"dropped", tr.Dropped, "through_seq", tr.Upto, "outbox_max", bound, "lowest_cursor", tr.Low)
	}
	return tr.Changed, nil
}
