package engine

import (
	"errors"
	"fmt"

	"github.com/questbox/questbox/engine/outbox"
	"github.com/questbox/questbox/engine/store"
)

// The outbox as durable consumers (MQTT) see it: its rules are package
// engine/outbox's.
//
// Outbox is one durable consumer of the event outbox. Read and Ack may be
// called from one goroutine at a time; Notify's channel may be read from
// any.
type Outbox struct {
	e    *Engine
	name string
	sub  *outbox.Subscription // for its wake-ups only
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
	// commits and stays current (engine/tickmem).
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
func (o *Outbox) Notify() <-chan struct{} { return o.sub.Wake() }

// Read returns up to limit events with Seq > since, oldest first. Unlike
// Engine.Events it does not fail over events the outbox bound dropped: it
// skips them, and the caller sees the gap in Seq.
func (o *Outbox) Read(since uint64, limit int) ([]Event, error) {
	var out []Event
	err := o.e.store.view(func(tx *store.Tx) error {
		var err error
		out, err = outbox.ReadPast(tx, since, limit)
		return err
	})
	return out, err
}

// Close stops the wake-ups.
func (o *Outbox) Close() { o.sub.Close() }
