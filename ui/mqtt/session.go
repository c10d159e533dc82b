package mqtt

import (
	"context"
	"fmt"
	"strings"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"golang.org/x/sync/errgroup"
)

// run is one connection's life: "online", the subscriptions, then three
// goroutines until the connection is lost or ctx ends — the event drain
// (outbox.go), the retained state (state.go) and the messages from the
// broker (commands, Home Assistant's birth, stale retained topics). It
// returns why it ended.
func (s *session) run(ctx context.Context) error {
	c := s.c
	if err := s.publish(ctx, c.statusTopic(), true, []byte(online)); err != nil {
		return err
	}
	if err := s.subscribe(ctx); err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return s.drain(gctx) })
	g.Go(func() error { return s.states(gctx) })
	g.Go(func() error { return s.messages(gctx) })
	g.Go(func() error {
		select {
		case <-s.lost:
			return fmt.Errorf("connection lost: %w", s.lostErr)
		case <-gctx.Done():
			return gctx.Err()
		}
	})
	return g.Wait()
}

// subscriptions are the topic filters a session subscribes to, with
// their QoS: the quest state and discovery topics (to remove what no
// longer exists), Home Assistant's birth message and the commands.
func (c *Client) subscriptions() map[string]byte {
	filters := map[string]byte{
		c.opt.Base + "/quest/+/state": 0,
		c.discoveryFilter():           0,
	}
	if c.opt.Discovery {
		filters[c.birthTopic()] = 1
	}
	if c.opt.Commands {
		filters[c.cmdPrefix()+"#"] = 1
	}
	return filters
}

// subscribe subscribes to the session's subscriptions.
func (s *session) subscribe(ctx context.Context) error {
	c := s.c
	filters := c.subscriptions()
	handler := func(_ paho.Client, m paho.Message) {
		select {
		case s.inbox <- m:
		default:
			c.log.Warn("mqtt: dropped a message from the broker: too many waiting", "topic", m.Topic())
		}
	}
	if err := s.wait(ctx, s.cl.SubscribeMultiple(filters, handler)); err != nil {
		return fmt.Errorf("subscribe: %w", err)
	}
	return nil
}

// messages handles what the broker sends: it announces the box to Home
// Assistant (now, and again after a birth message), removes retained
// topics of quests and entities that no longer exist, and runs commands.
func (s *session) messages(ctx context.Context) error {
	c := s.c
	if err := s.announce(ctx); err != nil {
		return err
	}
	var (
		birth      <-chan time.Time
		birthTimer *time.Timer
	)
	defer func() {
		if birthTimer != nil {
			birthTimer.Stop()
		}
	}()
	reconciling := map[string]bool{c.opt.Base + "/quest/+/state": true, c.discoveryFilter(): true}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-birth:
			birth = nil
			if err := s.announce(ctx); err != nil {
				return err
			}
		case m := <-s.inbox:
			topic := m.Topic()
			switch {
			case topic == c.birthTopic():
				if string(m.Payload()) == online && !m.Retained() && birth == nil {
					d := c.opt.BirthDelay()
					c.log.Info("mqtt: Home Assistant is back; announcing again", "after", d)
					birthTimer = time.NewTimer(d)
					birth = birthTimer.C
				}
			case strings.HasPrefix(topic, c.cmdPrefix()):
				s.command(ctx, m)
			default:
				filter, ok := s.reconcileFilter(topic)
				if !ok {
					continue
				}
				if !m.Retained() {
					// Our own publish came back: every retained message
					// of this filter was delivered before it.
					if reconciling[filter] {
						reconciling[filter] = false
						s.cl.Unsubscribe(filter)
					}
					continue
				}
				if err := s.reconcile(ctx, m); err != nil {
					return err
				}
			}
		}
	}
}

// reconcileFilter says which reconcile subscription topic belongs to.
func (s *session) reconcileFilter(topic string) (string, bool) {
	c := s.c
	if strings.HasPrefix(topic, c.opt.Base+"/quest/") && strings.HasSuffix(topic, "/state") {
		return c.opt.Base + "/quest/+/state", true
	}
	if _, ok := c.parseDiscoveryTopic(topic); ok {
		return c.discoveryFilter(), true
	}
	return "", false
}

// reconcile removes a retained quest state or discovery config that this
// box no longer publishes (an empty retained message clears it).
func (s *session) reconcile(ctx context.Context, m paho.Message) error {
	c := s.c
	if len(m.Payload()) == 0 {
		return nil
	}
	topic := m.Topic()
	stale := false
	if obj, ok := c.parseDiscoveryTopic(topic); ok {
		has, err := c.hasEntity(ctx, obj)
		if err != nil {
			return fmt.Errorf("read quest of %s: %w", topic, err)
		}
		stale = !c.opt.Discovery || !has
	} else {
		id := strings.TrimSuffix(strings.TrimPrefix(topic, c.opt.Base+"/quest/"), "/state")
		if _, err := c.api.Quest(ctx, id); err != nil {
			stale = isNotFound(err)
		}
	}
	if !stale {
		return nil
	}
	c.log.Info("mqtt: removing a retained topic that no longer exists", "topic", topic)
	return s.publish(ctx, topic, true, nil)
}
