package mqtt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/questbox/questbox/ui/api"
)

// retained remembers what this session last published on each retained
// topic, so that a batch of events republishes only what changed.
type retained map[string][]byte

// states keeps the retained topics current: all of them at the start of
// the session, then, after the API's event watch says what changed, the
// state of each quest touched, the consent list when it may have changed,
// and the summary when it changed; all of them again when the watch had
// to skip pruned events. It follows the engine live (not the outbox):
// state is about now, however far behind the event drain is.
//
// Under load the changes are coalesced: a topic is published at most once
// per StateInterval (the changes of the batches in between are read from
// the API when it is, so the last word is never lost), and a payload equal
// to the one last published on its topic is not published again.
func (s *session) states(ctx context.Context) error {
	wctx, stop := context.WithCancel(ctx)
	w, err := s.c.api.Watch(wctx, api.FromNewest)
	if err != nil {
		stop()
		return fmt.Errorf("watch events: %w", err)
	}
	batches := make(chan api.EventBatch)
	readErr := make(chan error, 1)
	read := make(chan struct{})
	go func() {
		defer close(read)
		for {
			b, err := w.Next(wctx)
			if err != nil {
				readErr <- err
				return
			}
			select {
			case batches <- b:
			case <-wctx.Done():
				readErr <- wctx.Err()
				return
			}
		}
	}()
	// The reader ends before the watch closes: its Next never races the
	// Close.
	defer func() {
		stop()
		<-read
		w.Close()
	}()

	clk := s.c.opt.Clock
	last := retained{}
	if err := s.syncAll(ctx, last); err != nil {
		return err
	}
	flushed := clk.Now()
	timer := clk.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	armed := false
	var p pendingState
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-readErr:
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("read events: %w", err)
		case b := <-batches:
			p.add(b)
			if wait := s.c.opt.StateInterval - clk.Now().Sub(flushed); wait > 0 {
				if !armed {
					timer.Reset(wait)
					armed = true
				}
				continue
			}
		case <-timer.C():
			armed = false
		}
		if armed {
			timer.Stop()
			armed = false
		}
		var err error
		if p.all {
			// Fell behind the retention window: everything, from now.
			err = s.syncAll(ctx, last)
		} else {
			err = s.apply(ctx, last, &p)
		}
		if err != nil {
			return err
		}
		p = pendingState{}
		flushed = clk.Now()
	}
}

// pendingState is what the batches read since the last publish changed.
type pendingState struct {
	all      bool            // the watch skipped events: publish everything
	touched  map[string]bool // quests whose state changed
	created  map[string]bool // quests created (a quest event from nothing): their discovery configs too
	consents bool            // the consent list may have changed
}

// add notes what batch b changed.
func (p *pendingState) add(b api.EventBatch) {
	if b.Skipped {
		p.all = true
		return
	}
	if p.touched == nil {
		p.touched, p.created = map[string]bool{}, map[string]bool{}
	}
	for _, ev := range b.Events {
		if ev.Quest != "" && ev.Kind != api.KindDevice {
			p.touched[ev.Quest] = true
			if ev.Kind == api.KindQuest && ev.From == "" {
				p.created[ev.Quest] = true
			}
		}
		if ev.ConsentsChanged {
			p.consents = true
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
	if um, ok := s.c.updateMessage(); ok {
		msgs = append(msgs, um)
	}
	return s.publishChanged(ctx, last, msgs)
}

// apply publishes what the pending batches changed.
func (s *session) apply(ctx context.Context, last retained, p *pendingState) error {
	c := s.c
	var msgs []message
	for id := range p.touched {
		q, err := c.api.Quest(ctx, id)
		if err != nil {
			return fmt.Errorf("read quest %s: %w", id, err)
		}
		if p.created[id] && c.opt.Discovery {
			// A new quest's entities: the session's announcement named
			// the quests there were then.
			for _, e := range c.QuestEntities(q) {
				msgs = append(msgs, c.entityMessage(e))
			}
		}
		msgs = append(msgs, c.questMessage(q))
	}
	if p.consents {
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

// consentMessage is the consent queue as the API shows it, fitted to
// api.MaxConsentPayload: Home Assistant reads it whole as the consent
// entity's attributes.
func (c *Client) consentMessage(ctx context.Context) (message, error) {
	cs, err := c.api.Consents(ctx)
	if err != nil {
		return message{}, fmt.Errorf("read consents: %w", err)
	}
	return message{c.consentTopic(), mustJSON(api.FitConsents(cs, api.MaxConsentPayload))}, nil
}

// updateMessage is the firmware's state for Home Assistant's update
// entity, when the box installs signed releases: the version running and
// the newest it holds (a release on trial or staged for the next start).
func (c *Client) updateMessage() (message, bool) {
	if c.door.Update == nil {
		return message{}, false
	}
	st, err := c.door.Update.Status()
	if err != nil {
		c.log.Warn("mqtt: the update entity's state is not published", "err", err)
		return message{}, false
	}
	latest := st.Running
	if st.Trial != "" {
		latest = st.Trial
	}
	state := map[string]any{"installed_version": st.Running, "latest_version": latest, "title": "questbox"}
	if c.opt.DashboardURL != "" {
		state["release_url"] = c.opt.DashboardURL
	}
	return message{c.updateTopic(), mustJSON(state)}, true
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
