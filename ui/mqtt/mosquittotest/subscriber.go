package mosquittotest

import (
	"crypto/tls"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
)

// WaitTimeout bounds every wait of a Subscriber: long enough for a slow
// CI machine, short enough that a hang fails the test.
const WaitTimeout = 60 * time.Second

// Message is one message a Subscriber received.
type Message struct {
	Topic    string
	Payload  string
	Retained bool
}

// Subscriber records every message on a topic filter at QoS 1. Its
// session is persistent (clean session off, a fixed client id), so a
// broker restart with persistence loses none of its messages; it
// reconnects by itself.
type Subscriber struct {
	t      testing.TB
	client paho.Client

	mu     sync.Mutex // guards msgs, notify
	msgs   []Message
	notify chan struct{} // closed and replaced at each message
}

// Subscribe connects a recording subscriber to b for filter.
func (b *Broker) Subscribe(t testing.TB, filter string) *Subscriber {
	t.Helper()
	return b.SubscribeAs(t, filter, "", "")
}

// SubscribeAs is Subscribe with a user name and password.
func (b *Broker) SubscribeAs(t testing.TB, filter, user, pass string) *Subscriber {
	t.Helper()
	s := &Subscriber{t: t, notify: make(chan struct{})}
	id := fmt.Sprintf("test-sub-%d", time.Now().UnixNano())
	o := paho.NewClientOptions().AddBroker(b.URL()).SetClientID(id).SetUsername(user).SetPassword(pass).
		SetCleanSession(false).SetAutoReconnect(true).SetResumeSubs(true).SetMaxReconnectInterval(200 * time.Millisecond).
		SetConnectRetry(true).SetConnectRetryInterval(100 * time.Millisecond).SetOrderMatters(true).
		SetDefaultPublishHandler(s.record)
	if b.CA != nil {
		cfg, err := b.clientTLS()
		if err != nil {
			t.Fatal(err)
		}
		o.SetTLSConfig(cfg)
	}
	s.client = paho.NewClient(o)
	if tok := s.client.Connect(); !tok.WaitTimeout(WaitTimeout) || tok.Error() != nil {
		t.Fatalf("subscriber connect: %v", tok.Error())
	}
	if tok := s.client.Subscribe(filter, 1, s.record); !tok.WaitTimeout(WaitTimeout) || tok.Error() != nil {
		t.Fatalf("subscribe %s: %v", filter, tok.Error())
	}
	t.Cleanup(func() { s.client.Disconnect(0) })
	return s
}

func (b *Broker) clientTLS() (*tls.Config, error) {
	pool, err := loadPool(b.CA.File)
	if err != nil {
		return nil, err
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

func (s *Subscriber) record(_ paho.Client, m paho.Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.msgs = append(s.msgs, Message{Topic: m.Topic(), Payload: string(m.Payload()), Retained: m.Retained()})
	close(s.notify)
	s.notify = make(chan struct{})
}

// Messages returns a copy of what was received so far.
func (s *Subscriber) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

// WaitFor waits until cond holds for the messages received so far (it is
// checked at each new message), failing the test after WaitTimeout with
// what, and returns the messages.
func (s *Subscriber) WaitFor(what string, cond func([]Message) bool) []Message {
	s.t.Helper()
	deadline := time.NewTimer(WaitTimeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		msgs := append([]Message(nil), s.msgs...)
		notify := s.notify
		s.mu.Unlock()
		if cond(msgs) {
			return msgs
		}
		select {
		case <-notify:
		case <-deadline.C:
			s.t.Fatalf("waited %s for %s; got %d messages:\n%s", WaitTimeout, what, len(msgs), summary(msgs))
		}
	}
}

// Last returns the newest message on topic.
func Last(msgs []Message, topic string) (Message, bool) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Topic == topic {
			return msgs[i], true
		}
	}
	return Message{}, false
}

func summary(msgs []Message) string {
	var b strings.Builder
	start := max(0, len(msgs)-40)
	if start > 0 {
		fmt.Fprintf(&b, "  ... %d earlier\n", start)
	}
	for _, m := range msgs[start:] {
		p := m.Payload
		if len(p) > 160 {
			p = p[:160] + "…"
		}
		fmt.Fprintf(&b, "  %s retained=%v %s\n", m.Topic, m.Retained, p)
	}
	return b.String()
}

// Publish publishes one message at QoS 1 (anonymously, or as user) and
// waits for the broker's PUBACK.
func (b *Broker) Publish(t testing.TB, topic, payload string, retained bool) {
	t.Helper()
	b.PublishAs(t, "", "", topic, payload, retained)
}

// PublishAs is Publish with a user name and password.
func (b *Broker) PublishAs(t testing.TB, user, pass, topic, payload string, retained bool) {
	t.Helper()
	o := paho.NewClientOptions().AddBroker(b.URL()).SetClientID(fmt.Sprintf("test-pub-%d", time.Now().UnixNano())).
		SetUsername(user).SetPassword(pass).SetAutoReconnect(false)
	if b.CA != nil {
		cfg, err := b.clientTLS()
		if err != nil {
			t.Fatal(err)
		}
		o.SetTLSConfig(cfg)
	}
	c := paho.NewClient(o)
	if tok := c.Connect(); !tok.WaitTimeout(WaitTimeout) || tok.Error() != nil {
		t.Fatalf("publisher connect: %v", tok.Error())
	}
	defer c.Disconnect(250)
	if tok := c.Publish(topic, 1, retained, payload); !tok.WaitTimeout(WaitTimeout) || tok.Error() != nil {
		t.Fatalf("publish %s: %v", topic, tok.Error())
	}
}
