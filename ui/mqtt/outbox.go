package mqtt

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
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
func (s *session) drain(ctx context.Context) error {
	acked := s.ob.Acked()
	d := &drainer{s: s, acked: acked, committed: acked, sent: acked}
	defer d.commit()
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
	switch {
	case d.acked-d.committed >= uint64(c.opt.AckEvery):
		d.commit()
	case d.ackDue == nil && d.acked != d.committed:
		d.ackTimer = time.NewTimer(c.opt.AckInterval)
		d.ackDue = d.ackTimer.C
	}
	return nil
}

// commit stores the cursor at acked, if it moved, and disarms the timer.
func (d *drainer) commit() {
	if d.ackTimer != nil {
		d.ackTimer.Stop()
		d.ackTimer, d.ackDue = nil, nil
	}
	if d.acked == d.committed {
		return
	}
	if err := d.s.ob.Ack(d.acked); err != nil {
		// The events are published again after a restart: duplicates,
		// not losses.
		d.s.c.log.Error("mqtt: could not commit the outbox cursor", "seq", d.acked, "err", err)
		return
	}
	d.committed = d.acked
	d.s.c.commits.Add(1)
}

func done(t paho.Token) bool {
	select {
	case <-t.Done():
		return true
	default:
		return false
	}
}
