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
	c, ob := s.c, s.ob
	acked := ob.Acked()
	committed, sent := acked, acked
	var (
		q        []inflight
		ackTimer *time.Timer
		ackDue   <-chan time.Time
	)
	commit := func() {
		if ackTimer != nil {
			ackTimer.Stop()
			ackTimer, ackDue = nil, nil
		}
		if acked == committed {
			return
		}
		if err := ob.Ack(acked); err != nil {
			// The events are published again after a restart: duplicates,
			// not losses.
			c.log.Error("mqtt: could not commit the outbox cursor", "seq", acked, "err", err)
			return
		}
		committed = acked
		c.commits.Add(1)
	}
	defer commit()
	for {
		// Fill the window.
		for len(q) < c.opt.Window {
			evs, err := ob.Read(sent, c.opt.Window-len(q))
			if err != nil {
				return fmt.Errorf("read the outbox: %w", err)
			}
			if len(evs) == 0 {
				break
			}
			for _, ev := range evs {
				payload, err := json.Marshal(ev)
				if err != nil {
					return fmt.Errorf("BUG: encode event %d: %w", ev.Seq, err)
				}
				q = append(q, inflight{seq: ev.Seq, tok: s.cl.Publish(c.eventTopic(string(ev.Kind)), 1, false, payload)})
				sent = ev.Seq
				c.published.Add(1)
			}
		}
		var head <-chan struct{}
		if len(q) > 0 {
			head = q[0].tok.Done()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.lost:
			return fmt.Errorf("connection lost: %w", s.lostErr)
		case <-ob.Notify():
		case <-ackDue:
			commit()
		case <-head:
			n := 0
			for n < len(q) && done(q[n].tok) {
				if err := q[n].tok.Error(); err != nil {
					q = q[n:]
					return fmt.Errorf("publish event %d: %w", q[0].seq, err)
				}
				acked = q[n].seq
				n++
			}
			q = q[n:]
			c.acked.Add(uint64(n))
			c.sent.Store(acked)
			switch {
			case acked-committed >= uint64(c.opt.AckEvery):
				commit()
			case ackDue == nil && acked != committed:
				ackTimer = time.NewTimer(c.opt.AckInterval)
				ackDue = ackTimer.C
			}
		}
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
