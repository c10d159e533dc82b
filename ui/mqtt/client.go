package mqtt

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/questbox/questbox/ui/api"
)

// Consumer is the name of MQTT's durable cursor in the event outbox.
const Consumer = "mqtt"

// Defaults of Options.
const (
	DefaultReconnectMin  = time.Second
	DefaultReconnectMax  = 30 * time.Second
	DefaultAckEvery      = 4096
	DefaultAckInterval   = time.Second
	DefaultStateInterval = time.Second
	DefaultWindow        = 512
	DefaultBirthDelay    = 5 * time.Second // the upper bound of the random delay
	// stableAfter is how long a connection must have lasted for the next
	// outage to start its back-off from ReconnectMin again.
	stableAfter = time.Minute
	// goodbyeTimeout bounds the "offline" publish at shutdown.
	goodbyeTimeout = 2 * time.Second
)

// Options configure a Client. Broker, Base and DeviceID are required; the
// zero value of the others is the documented default.
type Options struct {
	// Broker is the broker URL: tcp://, ssl:// (also tls://, mqtts://),
	// ws://, wss:// or mqtt://.
	Broker   string
	ClientID string
	Username string
	Password string
	// TLS configures TLS for ssl:// and wss:// brokers (see TLSConfig);
	// nil means the system's roots.
	TLS *tls.Config

	// Base is the base topic, e.g. "questbox/kitchen-pi".
	Base     string
	DeviceID string
	// Version is the firmware version Home Assistant shows.
	Version string
	// DashboardURL is Home Assistant's configuration_url for the device
	// ("" for none).
	DashboardURL string

	// Discovery publishes Home Assistant discovery under DiscoveryPrefix
	// (default "homeassistant"); false removes what this box published.
	Discovery       bool
	DiscoveryPrefix string
	// Commands accepts <base>/cmd/quest/<id>/stop|resume; Consent also
	// <base>/cmd/consent/<node>/approve|reject (needs Commands).
	Commands bool
	Consent  bool

	// ReconnectMin and ReconnectMax bound the back-off between connection
	// attempts (defaults 1s and 30s).
	ReconnectMin, ReconnectMax time.Duration
	// AckEvery and AckInterval batch the cursor's commits: at most one per
	// AckEvery acknowledged events or per AckInterval (defaults 4096 and 1s).
	AckEvery    int
	AckInterval time.Duration
	// Window is how many events may await their PUBACK at once (default 512).
	Window int
	// BirthDelay returns how long to wait before announcing again after
	// Home Assistant's birth message (default: random, up to 5s, so that
	// a fleet does not answer at the same instant).
	BirthDelay func() time.Duration

	// StateInterval is the shortest time between two publishes of one
	// retained state topic (default 1s): a busy tick's changes are
	// coalesced, and the last state is always published.
	StateInterval time.Duration
	// Clock times StateInterval (default the wall clock).
	Clock api.Clock

	// OnState is told every change of the connection (the daemon shows it
	// on the box). It must not block.
	OnState func(api.Broker)
	Log     *slog.Logger
}

// Stats count what a Client did; read them with Client.Stats.
type Stats struct {
	Connects   uint64 // connections accepted by the broker
	Published  uint64 // events published (a re-sent one counts again)
	Acked      uint64 // events whose PUBACK came back
	AckCommits uint64 // commits of the outbox cursor
	Sent       uint64 // the seq of the newest event acknowledged
}

// Client publishes what the API shows to one broker. Run it once.
type Client struct {
	api  *api.Server // the typed reads, the event watch and the outbox
	door api.Options // the API door commands go through, with MQTT's consent source
	opt  Options
	log  *slog.Logger
	disp string // the broker URL without credentials, for logs and events

	published, acked, commits, connects, sent atomic.Uint64

	mu      sync.Mutex // guards state, lastErr, down
	state   api.Broker
	lastErr string // the last error logged, so each is logged once
	down    bool   // a broker_down event was recorded and no broker_up since
}

// New returns a client of the API that ao describes: the daemon's
// in-process API over its running engine (api.Only), with the box for the
// summary. It checks the options; it does not connect (Run does).
func New(ao api.Options, opt Options) (*Client, error) {
	u, err := url.Parse(opt.Broker)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("mqtt: broker %q is not a URL like tcp://host:1883", opt.Broker)
	}
	if opt.Base == "" || opt.DeviceID == "" {
		return nil, errors.New("mqtt: base topic and device id are required")
	}
	if opt.Consent && !opt.Commands {
		return nil, errors.New("mqtt: consent over MQTT needs commands")
	}
	if opt.ClientID == "" {
		opt.ClientID = "questbox-" + opt.DeviceID
	}
	if opt.DiscoveryPrefix == "" {
		opt.DiscoveryPrefix = "homeassistant"
	}
	if opt.StateInterval <= 0 {
		opt.StateInterval = DefaultStateInterval
	}
	if opt.Clock == nil {
		opt.Clock = api.WallClock()
	}
	if opt.ReconnectMin <= 0 {
		opt.ReconnectMin = DefaultReconnectMin
	}
	if opt.ReconnectMax <= 0 {
		opt.ReconnectMax = DefaultReconnectMax
	}
	opt.ReconnectMax = max(opt.ReconnectMax, opt.ReconnectMin)
	if opt.AckEvery <= 0 {
		opt.AckEvery = DefaultAckEvery
	}
	if opt.AckInterval <= 0 {
		opt.AckInterval = DefaultAckInterval
	}
	if opt.Window <= 0 {
		opt.Window = DefaultWindow
	}
	if opt.BirthDelay == nil {
		opt.BirthDelay = func() time.Duration { return rand.N(DefaultBirthDelay) }
	}
	if opt.OnState == nil {
		opt.OnState = func(api.Broker) {}
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if ao.Log == nil {
		ao.Log = opt.Log
	}
	c := &Client{api: api.New(ao), door: ao, opt: opt, log: opt.Log.With("broker", u.Redacted()), disp: u.Redacted()}
	c.door.Internal = true                        // the messages go to this box's own log
	c.door.Consent = api.MQTTConsent(opt.Consent) // L3 consent from "mqtt", only when the owner enabled it
	c.state = api.Broker{Configured: true}
	return c, nil
}

// Stats returns what the client did so far.
func (c *Client) Stats() Stats {
	return Stats{Connects: c.connects.Load(), Published: c.published.Load(), Acked: c.acked.Load(),
		AckCommits: c.commits.Load(), Sent: c.sent.Load()}
}

// State is the connection as the box shows it.
func (c *Client) State() api.Broker {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// Run connects, publishes and reconnects until ctx ends; then it commits
// the cursor, publishes "offline" and disconnects. It returns an error
// only when the outbox cannot be opened (the store failed); a broker that
// is down, refuses us or drops the connection is retried for ever.
func (c *Client) Run(ctx context.Context) error {
	ob, err := c.api.OpenOutbox(ctx, Consumer)
	if err != nil {
		return fmt.Errorf("mqtt: %w", err)
	}
	defer ob.Close()
	// Commands go through the API's own handlers, as the CLI's do.
	hc, stop := api.InProcess(api.New(c.door))
	defer stop()
	door := api.NewClient(hc, "mqtt")
	c.opt.OnState(c.State())
	wait := c.opt.ReconnectMin
	for {
		s := newSession(c, ob, door)
		err := s.connect(ctx)
		if ctx.Err() != nil {
			s.cl.Disconnect(0)
			return nil
		}
		if err != nil {
			c.failed(err)
		} else {
			c.up()
			began := time.Now()
			err = s.run(ctx)
			if ctx.Err() != nil {
				s.goodbye()
				return nil
			}
			s.cl.Disconnect(0)
			c.failed(err)
			if time.Since(began) >= stableAfter {
				wait = c.opt.ReconnectMin
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(jitter(wait)):
		}
		wait = min(2*wait, c.opt.ReconnectMax)
	}
}

// jitter spreads d by ±20%, so boxes that lost one broker do not return
// in step.
func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return d - d/5 + rand.N(2*d/5+1)
}

// up records a connection the broker accepted.
func (c *Client) up() {
	c.connects.Add(1)
	c.mu.Lock()
	c.state = api.Broker{Configured: true, Connected: true}
	wasDown := c.down
	c.down, c.lastErr = false, ""
	st := c.state
	c.mu.Unlock()
	c.opt.OnState(st)
	c.log.Info("mqtt: connected to the broker", "client_id", c.opt.ClientID, "base", c.opt.Base, "was_down", wasDown)
	c.record(api.DeviceEvent{What: api.DeviceBrokerUp, Broker: c.disp})
}

// failed records a failed or lost connection: the box shows it (a fault
// for errors a person must fix), the log says it once per distinct error,
// and the first failure after a connection is a broker_down event.
func (c *Client) failed(err error) {
	p := classify(err)
	c.mu.Lock()
	c.state = api.Broker{Configured: true, Error: p.msg, Fault: p.fault}
	st := c.state
	repeat := p.msg == c.lastErr
	c.lastErr = p.msg
	first := !c.down
	c.down = true
	c.mu.Unlock()
	switch {
	case repeat:
		c.log.Debug("mqtt: still failing", "err", p.msg)
	case p.fault:
		c.log.Error("mqtt: "+p.msg+"; "+p.hint+"; retrying with back-off", "err", err)
	default:
		c.log.Warn("mqtt: "+p.msg+"; "+p.hint+"; retrying with back-off, events wait in the outbox", "err", err)
	}
	c.opt.OnState(st)
	if first {
		c.record(api.DeviceEvent{What: api.DeviceBrokerDown, Broker: c.disp, Error: p.msg, Fault: p.fault})
	}
}

func (c *Client) record(d api.DeviceEvent) {
	if err := c.api.RecordDeviceEvent(context.Background(), d); err != nil {
		c.log.Error("mqtt: could not record the broker's state", "what", d.What, "err", err)
	}
}

// Topic names under the base.
func (c *Client) statusTopic() string         { return c.opt.Base + "/status" }
func (c *Client) eventTopic(k string) string  { return c.opt.Base + "/event/" + k }
func (c *Client) questTopic(id string) string { return c.opt.Base + "/quest/" + id + "/state" }
func (c *Client) consentTopic() string        { return c.opt.Base + "/consent" }
func (c *Client) summaryTopic() string        { return c.opt.Base + "/summary" }
func (c *Client) updateTopic() string         { return c.opt.Base + "/update" }
func (c *Client) cmdPrefix() string           { return c.opt.Base + "/cmd/" }

// Payloads of the status topic.
const (
	online  = "online"
	offline = "offline"
)

// session is one connection: its paho client, and the goroutines that
// publish through it until it is lost or ctx ends.
type session struct {
	c    *Client
	ob   *api.Outbox
	door *api.Client // the API the commands go through
	cl   paho.Client

	lostOnce sync.Once
	lost     chan struct{} // closed when the connection is lost
	lostErr  error         // set before lost is closed

	inbox chan paho.Message // messages from the broker, for the session's goroutine
}

// inboxSize bounds the messages from the broker waiting to be handled;
// past it they are dropped with a log line (a flood must not grow memory).
const inboxSize = 256

func newSession(c *Client, ob *api.Outbox, door *api.Client) *session {
	s := &session{c: c, ob: ob, door: door, lost: make(chan struct{}), inbox: make(chan paho.Message, inboxSize)}
	s.cl = paho.NewClient(s.pahoOptions())
	return s
}

// lose marks the connection lost (once).
func (s *session) lose(err error) {
	s.lostOnce.Do(func() {
		if err == nil {
			err = errors.New("connection lost")
		}
		s.lostErr = err
		close(s.lost)
	})
}

// connect makes one connection attempt.
func (s *session) connect(ctx context.Context) error {
	tok := s.cl.Connect()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tok.Done():
		return tok.Error()
	}
}

// wait waits for tok: nil once the broker acknowledged it, an error when
// the connection was lost or ctx ended first.
func (s *session) wait(ctx context.Context, tok paho.Token) error {
	select {
	case <-tok.Done():
		return tok.Error()
	case <-s.lost:
		return s.lostErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// publish publishes at QoS 1 and waits for the PUBACK.
func (s *session) publish(ctx context.Context, topic string, retained bool, payload []byte) error {
	if err := s.wait(ctx, s.cl.Publish(topic, 1, retained, payload)); err != nil {
		return fmt.Errorf("publish %s: %w", topic, err)
	}
	return nil
}

// goodbye ends a session at shutdown: "offline" (retained), then a clean
// DISCONNECT, so the broker drops the Last Will.
func (s *session) goodbye() {
	ctx, cancel := context.WithTimeout(context.Background(), goodbyeTimeout)
	defer cancel()
	if err := s.publish(ctx, s.c.statusTopic(), true, []byte(offline)); err != nil {
		s.c.log.Warn("mqtt: could not publish offline at shutdown; the broker's Last Will will say it", "err", err)
	}
	s.cl.Disconnect(250)
	s.c.log.Info("mqtt: disconnected", "sent_seq", s.c.sent.Load())
}
