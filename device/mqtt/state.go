package mqtt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/questbox/questbox/device/box"
	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/ui/api"
)

// retained remembers what this session last published on each retained
// topic, so that a batch of events republishes only what changed.
type retained map[string][]byte

// states keeps the retained topics current: all of them at the start of
// the session, then, after each batch of committed events, the state of
// each quest the batch touched, the consent list when it may have changed,
// and the summary when it changed. It follows the engine live (not the
// outbox): state is about now, however far behind the event drain is.
func (s *session) states(ctx context.Context) error {
	c := s.c
	sub := c.eng.Subscribe(c.eng.LastSeq())
	defer func() { sub.Close() }()
	last := retained{}
	if err := s.syncAll(ctx, last); err != nil {
		return err
	}
	for {
		evs, err := sub.Next(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, engine.ErrEventsPruned) {
			// Fell behind the retention window: start again from now.
			sub.Close()
			sub = c.eng.Subscribe(c.eng.LastSeq())
			if err := s.syncAll(ctx, last); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("read events: %w", err)
		}
		if err := s.apply(ctx, last, evs); err != nil {
			return err
		}
	}
}

// syncAll publishes every retained topic.
func (s *session) syncAll(ctx context.Context, last retained) error {
	qs, err := s.c.eng.Quests()
	if err != nil {
		return fmt.Errorf("read quests: %w", err)
	}
	var msgs []message
	for _, q := range qs {
		msgs = append(msgs, s.c.questMessage(q))
	}
	cm, err := s.c.consentMessage()
	if err != nil {
		return err
	}
	msgs = append(msgs, cm, s.c.summaryMessage(qs))
	return s.publishChanged(ctx, last, msgs)
}

// apply publishes what a batch of events changed.
func (s *session) apply(ctx context.Context, last retained, evs []engine.Event) error {
	c := s.c
	touched := map[string]bool{}
	consents := false
	for _, ev := range evs {
		if ev.Quest != "" && ev.Kind != engine.KindDevice {
			touched[ev.Quest] = true
		}
		aw := string(engine.AwaitingConsent)
		if ev.Kind == engine.KindConsent || ev.Kind == engine.KindNode && (ev.From == aw || ev.To == aw) {
			consents = true
		}
	}
	var msgs []message
	for id := range touched {
		q, err := c.eng.Quest(id)
		if err != nil {
			return fmt.Errorf("read quest %s: %w", id, err)
		}
		msgs = append(msgs, c.questMessage(q))
	}
	if consents {
		cm, err := c.consentMessage()
		if err != nil {
			return err
		}
		msgs = append(msgs, cm)
	}
	qs, err := c.eng.Quests()
	if err != nil {
		return fmt.Errorf("read quests: %w", err)
	}
	msgs = append(msgs, c.summaryMessage(qs))
	return s.publishChanged(ctx, last, msgs)
}

// message is one retained publish.
type message struct {
	topic   string
	payload []byte
}

// publishChanged publishes the messages whose payload differs from the
// last one on their topic, retained at QoS 1, and waits for every PUBACK.
func (s *session) publishChanged(ctx context.Context, last retained, msgs []message) error {
	var toks []paho.Token
	var sent []message
	for _, m := range msgs {
		if prev, ok := last[m.topic]; ok && bytes.Equal(prev, m.payload) {
			continue
		}
		toks = append(toks, s.cl.Publish(m.topic, 1, true, m.payload))
		sent = append(sent, m)
	}
	for i, t := range toks {
		if err := s.wait(ctx, t); err != nil {
			return fmt.Errorf("publish %s: %w", sent[i].topic, err)
		}
		last[sent[i].topic] = sent[i].payload
	}
	return nil
}

func (c *Client) questMessage(q *engine.Quest) message {
	return message{c.questTopic(q.ID), mustJSON(api.QuestView(q))}
}

func (c *Client) consentMessage() (message, error) {
	reqs, err := c.eng.Consents()
	if err != nil {
		return message{}, fmt.Errorf("read consents: %w", err)
	}
	now := c.eng.Now()
	out := make([]api.Consent, len(reqs))
	for i, r := range reqs {
		out[i] = api.ConsentView(r, now, c.eng.ConsentExpired(r, now))
	}
	return message{c.consentTopic(), mustJSON(out)}, nil
}

func (c *Client) summaryMessage(qs []*engine.Quest) message {
	st := box.Status{Online: true}
	if c.opt.Status != nil {
		got, err := c.opt.Status()
		if err != nil {
			c.log.Warn("mqtt: could not read the box's status for the summary", "err", err)
		}
		st = got
	} else {
		// No box: the engine alone says what runs and what waits.
		reqs, err := c.eng.Consents()
		if err == nil {
			now := c.eng.Now()
			for _, r := range reqs {
				if !c.eng.ConsentExpired(r, now) {
					st.State.ConsentsPending++
				}
			}
		}
		running := 0
		for _, q := range qs {
			running += q.Counts[engine.Running]
		}
		st.State.AgentsRunning = max(running, c.eng.InFlight())
	}
	return message{c.summaryTopic(), mustJSON(api.SummaryView(qs, st))}
}

// mustJSON encodes a view type, which cannot fail.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("BUG: encode %T: %v", v, err))
	}
	return b
}

func isNotFound(err error) bool { return errors.Is(err, engine.ErrNotFound) }
