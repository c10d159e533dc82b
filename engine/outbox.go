package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
)

// The outbox as durable consumers (MQTT) see it.
//
// A durable consumer has a cursor in the store: the seq up to which it
// has delivered every event to its peer. Retention never prunes an event a
// cursor has not passed, so a consumer that acknowledges only after its peer
// did (the broker's PUBACK) loses nothing across outages and reboots.
//
// The bound. While a consumer's peer is away the outbox grows. With
// Options.OutboxMax set, once more than OutboxMax events are newer than
// the lowest cursor, the tick drops the oldest undelivered events of the
// kinds whose latest state is also published as state (node, quest,
// device: see Droppable) — never a verdict or a consent event, which stay
// until delivered whatever it costs. Only events older than the retention
// window are ever dropped (OutboxMax is at least EventRetention), so a
// dashboard replaying the retention window sees no hole; a reader asking
// for events before the newest dropped one gets ErrEventsPruned, as if they
// had been pruned. A durable consumer reads past the holes with
// Outbox.Read: its peer sees a gap in seq.

// kOutboxTrimmed is the meta key of the newest seq the outbox bound dropped.
var kOutboxTrimmed = []byte("outbox_trimmed")

// trimBatch bounds the events one tick looks at for the outbox bound, so a
// tick stays cheap however large the backlog is.
const trimBatch = 5000

// Droppable reports whether the outbox bound may drop undelivered events
// of kind: node, quest and device events may go (the quest state and the
// device summary carry their latest word); verdict and consent events never
// do.
func Droppable(kind string) bool {
	return kind == KindNode || kind == KindQuest || kind == KindDevice
}

// Outbox is one durable consumer of the event outbox. Read and Ack may be
// called from one goroutine at a time; Notify's channel may be read from
// any.
type Outbox struct {
	e    *Engine
	name string
	sub  *Subscription // for its wake-ups only
}

// OpenOutbox returns the durable consumer name. A consumer that does not
// exist yet starts at the newest event (one commit, the first time only):
// turning MQTT on does not replay history, but from then on nothing is
// lost, even before the first connection.
func (e *Engine) OpenOutbox(name string) (*Outbox, error) {
	if name == "" {
		return nil, fmt.Errorf("outbox: empty consumer name: %w", ErrInvalid)
	}
	// Engine writes, as AckEvents: the tick's quest cache learns their
	// commits and stays current (questcache.go).
	err := e.update(func(t *txn) error {
		c := t.tx.Cursors()
		if c.Get([]byte(name)) != nil {
			return errUnchanged
		}
		return c.Put([]byte(name), u64(t.tx.Events().Sequence()))
	})
	if err != nil && !errors.Is(err, errUnchanged) {
		return nil, fmt.Errorf("outbox %s: %w", name, err)
	}
	return &Outbox{e: e, name: name, sub: e.Subscribe(0)}, nil
}

// RemoveConsumer forgets the durable consumer name, so its cursor no
// longer holds events in the outbox (the daemon calls it for MQTT when MQTT
// is turned off). Removing a consumer that does not exist does nothing.
func (e *Engine) RemoveConsumer(name string) error {
	err := e.update(func(t *txn) error {
		c := t.tx.Cursors()
		if c.Get([]byte(name)) == nil {
			return errUnchanged // nothing to write: no commit
		}
		return c.Delete([]byte(name))
	})
	if errors.Is(err, errUnchanged) {
		return nil
	}
	return err
}

// Name is the consumer's name.
func (o *Outbox) Name() string { return o.name }

// Acked is the seq up to which the consumer has acknowledged every event.
func (o *Outbox) Acked() uint64 { return o.e.Cursor(o.name) }

// Ack records that every event up to seq was delivered: one commit. Call
// it for a batch, not for each event (SD cards wear out).
func (o *Outbox) Ack(seq uint64) error { return o.e.AckEvents(o.name, seq) }

// Last is the seq of the newest event.
func (o *Outbox) Last() uint64 { return o.e.LastSeq() }

// Notify returns a channel that receives a value after each commit that
// added events (coalesced: one value may stand for many commits). Check
// with Read after it fires; it never blocks the engine.
func (o *Outbox) Notify() <-chan struct{} { return o.sub.wake }

// Read returns up to limit events with Seq > since, oldest first. Unlike
// Engine.Events it does not fail over events the outbox bound dropped: it
// skips them, and the caller sees the gap in Seq.
func (o *Outbox) Read(since uint64, limit int) ([]Event, error) {
	if limit <= 0 {
		limit = 500
	}
	var out []Event
	err := o.e.store.view(func(tx *store.Tx) error {
		return records.EventsAfter(tx.Events().Cursor(), since, func(ev *Event) bool {
			out = append(out, *ev)
			return len(out) < limit
		})
	})
	return out, err
}

// Close stops the wake-ups.
func (o *Outbox) Close() { o.sub.Close() }

// trimmedThrough is the newest seq the outbox bound dropped (0: none).
func trimmedThrough(tx *store.Tx) uint64 {
	return seqOf(tx.Meta().Get(kOutboxTrimmed))
}

// trimOutbox applies the outbox bound (see the top of this file): it
// drops droppable events that no cursor passed and that are more than bound
// behind the newest, oldest first, at most trimBatch looked at per call.
// It returns how many records it changed (0: it wrote nothing).
func (t *txn) trimOutbox(bound int) (int, error) {
	if bound <= 0 {
		return 0, nil
	}
	b := t.tx.Events()
	last := b.Sequence()
	if last <= uint64(bound) {
		return 0, nil
	}
	limit := last - uint64(bound) // events up to here are past the bound
	low, any := lowestCursor(t.tx)
	if !any || low >= limit {
		return 0, nil // no consumer is behind the bound (retention prunes the rest)
	}
	done := trimmedThrough(t.tx)
	from := max(low, done)
	if from >= limit {
		return 0, nil
	}
	w := outboxTrim{from: from, limit: limit, upto: from}
	if err := w.walk(b.Cursor()); err != nil {
		return 0, err
	}
	if err := w.rewrite(b); err != nil {
		return 0, err
	}
	changed := len(w.rewrites)
	if w.upto > done {
		if err := t.tx.Meta().Put(kOutboxTrimmed, u64(w.upto)); err != nil {
			return 0, err
		}
		changed++
	}
	if w.dropped > 0 {
		t.e.log.Warn("outbox bound reached: dropped undelivered node/quest/device events (verdict and consent events are kept)",
			"dropped", w.dropped, "through_seq", w.upto, "outbox_max", bound, "lowest_cursor", low)
	}
	return changed, nil
}

// lowestCursor is the lowest seq a durable consumer acknowledged; any is
// false when there is no consumer.
func lowestCursor(tx *store.Tx) (low uint64, any bool) {
	low = math.MaxUint64
	cc := tx.Cursors().Cursor()
	for k, v := cc.First(); k != nil; k, v = cc.Next() {
		low, any = min(low, seqOf(v)), true
	}
	return low, any
}

// outboxTrim is one application of the outbox bound (trimOutbox): the
// events past from and up to limit that it drops. Records are rewritten
// once the walk is over (a bbolt cursor does not survive writes to its
// bucket): a single record or a group whose events all go is deleted, a
// group that keeps some is written again without the others, keyed by its
// first kept seq.
type outboxTrim struct {
	from, limit uint64
	rewrites    []outboxRewrite
	dropped     int
	// upto is the newest seq looked at; looked how many were.
	upto   uint64
	looked int
}

// outboxRewrite is a record of the outbox to write again without the
// events the bound drops: keep nil deletes it.
type outboxRewrite struct {
	key  []byte
	keep []Event
}

// walk looks at the records from the one holding w.from+1 on, up to
// w.limit and trimBatch events.
func (w *outboxTrim) walk(c *store.Cursor) error {
	for k, v := records.SeekEvents(c, w.from); k != nil && seqOf(k) <= w.limit && w.looked < trimBatch; k, v = c.Next() {
		var err error
		if records.IsGroup(v) {
			err = w.group(k, v)
		} else {
			err = w.single(k, v)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// single looks at a record of one event (before schema 8).
func (w *outboxTrim) single(k, v []byte) error {
	w.looked++
	w.upto = seqOf(k)
	var head struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(v, &head); err != nil {
		return fmt.Errorf("decode event %d: %w", seqOf(k), err)
	}
	if Droppable(head.Kind) {
		w.rewrites = append(w.rewrites, outboxRewrite{key: append([]byte(nil), k...)})
		w.dropped++
	}
	return nil
}

// group looks at the events of a group record.
func (w *outboxTrim) group(k, v []byte) error {
	var all, keep []Event
	_, err := records.EachEvent(k, v, 0, func(ev *Event) bool {
		all = append(all, *ev)
		if ev.Seq > w.from && ev.Seq <= w.limit && w.looked < trimBatch {
			w.looked++
			w.upto = ev.Seq
			if Droppable(ev.Kind) {
				return true
			}
		}
		keep = append(keep, *ev)
		return true
	})
	if err != nil {
		return err
	}
	if len(keep) < len(all) {
		w.rewrites = append(w.rewrites, outboxRewrite{key: append([]byte(nil), k...), keep: keep})
		w.dropped += len(all) - len(keep)
	}
	return nil
}

// rewrite writes the records the walk changed into the outbox b.
func (w *outboxTrim) rewrite(b *store.Bucket) error {
	for _, r := range w.rewrites {
		if err := b.Delete(r.key); err != nil {
			return err
		}
		if len(r.keep) == 0 {
			continue
		}
		g, err := records.EncodeGroup(r.keep)
		if err != nil {
			return fmt.Errorf("BUG: encode events from %d: %w", r.keep[0].Seq, err)
		}
		if err := b.Put(u64(r.keep[0].Seq), g); err != nil {
			return err
		}
	}
	return nil
}
