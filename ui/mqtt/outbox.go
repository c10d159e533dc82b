package mqtt

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/questbox/questbox/ui/api"
)

// inflight is an event published and not yet acknowledged.
type inflight struct {
	seq uint64
	tok paho.Token
}

// drain publishes the outbox after the committed cursor, in seq order, at
// QoS 1, with at most Window events awaiting their PUBACK. The cursor
// moves past an event only once its PUBACK and those of every event
// before it came back, and it is committed at most once per AckEvery
// events or AckInterval, and when the session ends.
//
// A commit of the cursor is a write of the store, which joins the group
// commit: while a busy tick's results are being gathered it waits for
// their batch, up to the group commit's latency. The publishing does not
// wait with it: the commit runs on a goroutine of its own (one at a
// time), and only the session's last commit is waited for.
func (s *session) drain(ctx context.Context) error {
	acked := s.ob.Acked()
	d := &drainer{s: s, acked: acked, committed: acked, sent: acked}
	defer d.finish()
	for {
		if err := d.fill(); err != nil {
			return err
		}
		var head <-chan struct{}
		if len(d.q) > 0 {
			head = d.q[0].tok.Done()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.lost:
			return fmt.Errorf("connection lost: %w", s.lostErr)
		case <-s.ob.Notify():
		case <-d.ackDue:
			d.commit()
		case err := <-d.ackDone:
			d.committedAt(err)
		case <-head:
			if err := d.acknowledged(); err != nil {
				return err
			}
		}
	}
}

// drainer is the state of one session's drain, owned by its goroutine.
type drainer struct {
	s *session
	// acked is the newest seq whose PUBACK, and every one before it, came
	// back; committed is the cursor stored in the outbox; sent is the
	// newest seq published.
	acked, committed, sent uint64
	q                      []inflight // published, awaiting PUBACK, in seq order
	ackTimer               *time.Timer
	ackDue                 <-chan time.Time // fires when the cursor is due a commit
	// ackDone, while a commit of the cursor at committing runs, receives
	// its outcome; nil when none runs. again: another commit fell due
	// meanwhile.
	ackDone    chan error
	committing uint64
	again      bool
}

// fill publishes events after sent until Window of them await a PUBACK
// or the outbox has no more.
func (d *drainer) fill() error {
	c := d.s.c
	for len(d.q) < c.opt.Window {
		evs, err := d.s.ob.Read(d.sent, c.opt.Window-len(d.q))
		if err != nil {
			return fmt.Errorf("read the outbox: %w", err)
		}
		if len(evs) == 0 {
			return nil
		}
		for _, ev := range evs {
			payload, err := json.Marshal(ev)
			if err != nil {
				return fmt.Errorf("BUG: encode event %d: %w", ev.Seq, err)
			}
			d.q = append(d.q, inflight{seq: ev.Seq, tok: d.s.cl.Publish(c.eventTopic(string(ev.Kind)), 1, false, payload)})
			d.sent = ev.Seq
			c.published.Add(1)
		}
	}
	return nil
}

// acknowledged moves acked past the PUBACKs that came back in order, and
// commits the cursor every AckEvery events or arms the AckInterval timer.
func (d *drainer) acknowledged() error {
	c := d.s.c
	n := 0
	for n < len(d.q) && done(d.q[n].tok) {
		if err := d.q[n].tok.Error(); err != nil {
			d.q = d.q[n:]
			return fmt.Errorf("publish event %d: %w", d.q[0].seq, err)
		}
		d.acked = d.q[n].seq
		n++
	}
	d.q = d.q[n:]
	c.acked.Add(uint64(n))
	c.sent.Store(d.acked)
	// Counted from the commit running, if one is: it stores its seq.
	base := d.committed
	if d.ackDone != nil {
		base = d.committing
	}
	switch {
	case d.acked-base >= uint64(c.opt.AckEvery):
		d.commit()
	case d.ackDue == nil && d.acked != base:
		d.ackTimer = time.NewTimer(c.opt.AckInterval)
		d.ackDue = d.ackTimer.C
	}
	return nil
}

// commit starts storing the cursor at acked, if it moved, and disarms the
// timer; with a commit already running, it runs again once that one is
// done (committedAt).
func (d *drainer) commit() {
	if d.ackTimer != nil {
		d.ackTimer.Stop()
		d.ackTimer, d.ackDue = nil, nil
	}
	if d.acked == d.committed {
		return
	}
	if d.ackDone != nil {
		d.again = true
		return
	}
	d.committing, d.ackDone = d.acked, make(chan error, 1)
	go func(ob *api.Outbox, seq uint64, done chan<- error) { done <- ob.Ack(seq) }(d.s.ob, d.committing, d.ackDone)
}

// committedAt takes the outcome of the running commit of the cursor.
func (d *drainer) committedAt(err error) {
	d.ackDone = nil
	if err != nil {
		// The events are published again after a restart: duplicates,
		// not losses.
		d.s.c.log.Error("mqtt: could not commit the outbox cursor", "seq", d.committing, "err", err)
	} else {
		d.committed = max(d.committed, d.committing)
		d.s.c.commits.Add(1)
	}
	if d.again {
		d.again = false
		d.commit()
	}
}

// finish ends the drain: the running commit, then the cursor at acked.
func (d *drainer) finish() {
	if d.ackDone != nil {
		d.committedAt(<-d.ackDone)
	}
	d.again = false
	d.commit()
	if d.ackDone != nil {
		d.committedAt(<-d.ackDone)
	}
}

func done(t paho.Token) bool {
	select {
	case <-t.Done():
		return true
	default:
		return false
	}
}
