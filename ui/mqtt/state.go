package mqtt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/questbox/questbox/ui/api"
)

// retained remembers what this session last published on each retained
// topic, so that a batch of events republishes only what changed.
type retained map[string][]byte

// states keeps the retained topics current: all of them at the start of
// the session, then, after each batch of the API's event watch, the state
// of each quest the batch touched, the consent list when it may have
// changed, and the summary when it changed; all of them again when the
// watch had to skip pruned events. It follows the engine live (not the
// outbox): state is about now, however far behind the event drain is.
func (s *session) states(ctx context.Context) error {
	w, err := s.c.api.Watch(ctx, api.FromNewest)
	if err != nil {
		return fmt.Errorf("watch events: %w", err)
	}
	defer w.Close()
	last := retained{}
	if err := s.syncAll(ctx, last); err != nil {
		return err
	}
	for {
		b, err := w.Next(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return fmt.Errorf("read events: %w", err)
		}
		if b.Skipped {
			// Fell behind the retention window: everything, from now.
			err = s.syncAll(ctx, last)
		} else {
			err = s.apply(ctx, last, b.Events)
		}
		if err != nil {
			return err
		}
	}
}

// syncAll publishes every retained topic.
func (s *session) syncAll(ctx context.Context, last retained) error {
	qs, err := s.c.api.Quests(ctx)
	if err != nil {
		return fmt.Errorf("read quests: %w", err)
	}
	var msgs []message
	for _, q := range qs {
		msgs = append(msgs, s.c.questMessage(q))
	}
	cm, err := s.c.consentMessage(ctx)
	if err != nil {
		return err
	}
	sm, err := s.c.summaryMessage(ctx)
	if err != nil {
		return err
	}
	msgs = append(msgs, cm, sm)
	return s.publishChanged(ctx, last, msgs)
}

// apply publishes what a batch of events changed.
func (s *session) apply(ctx context.Context, last retained, evs []api.Event) error {
	c := s.c
	touched := map[string]bool{}
	consents := false
	for _, ev := range evs {
		if ev.Quest != "" && ev.Kind != api.KindDevice {
			touched[ev.Quest] = true
		}
		aw := string(api.NodeAwaitingConsent)
		if ev.Kind == api.KindConsent || ev.Kind == api.KindNode && (ev.From == aw || ev.To == aw) {
			consents = true
		}
	}
	var msgs []message
	for id := range touched {
		q, err := c.api.Quest(ctx, id)
		if err != nil {
			return fmt.Errorf("read quest %s: %w", id, err)
		}
		msgs = append(msgs, c.questMessage(q))
	}
	if consents {
		cm, err := c.consentMessage(ctx)
		if err != nil {
			return err
		}
		msgs = append(msgs, cm)
	}
	sm, err := c.summaryMessage(ctx)
	if err != nil {
		return err
	}
	msgs = append(msgs, sm)
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

func (c *Client) questMessage(q api.Quest) message {
	return message{c.questTopic(q.ID), mustJSON(q)}
}

func (c *Client) consentMessage(ctx context.Context) (message, error) {
	cs, err := c.api.Consents(ctx)
	if err != nil {
		return message{}, fmt.Errorf("read consents: %w", err)
	}
	return message{c.consentTopic(), mustJSON(cs)}, nil
}

// summaryMessage is the API's summary: its counts of live consents and
// agents running are the LEDs' own.
func (c *Client) summaryMessage(ctx context.Context) (message, error) {
	sum, err := c.api.Summary(ctx)
	if err != nil {
		return message{}, fmt.Errorf("read the summary: %w", err)
	}
	return message{c.summaryTopic(), mustJSON(sum)}, nil
}

// mustJSON encodes a view type, which cannot fail.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("BUG: encode %T: %v", v, err))
	}
	return b
}

func isNotFound(err error) bool {
	ae, ok := errors.AsType[*api.Error](err)
	return ok && ae.Code == api.CodeNotFound
}
