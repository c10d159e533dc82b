// Package box is the box's runtime state: what its LEDs show and why,
// the consent queue its button acts on, the network and broker state, and
// the faults. It joins the engine (quests, consents, runs) to the device
// (LEDs and button); the API, the dashboard and MQTT read it through
// Status.
//
// What the LEDs show is recomputed from scratch on every batch of engine
// events, every tick, every consent deadline and every change reported to
// the box: the quests (their Counts, kept in step by the engine, so no node
// is scanned), the consent queue and the runs in flight. That is a couple of
// small bbolt reads — O(quests + pending consents) — and it cannot drift the
// way counting events could; a burst of events is one recomputation,
// because the subscription delivers them in batches and wake-ups are
// coalesced.
package box

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/questbox/questbox/device"
	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/gates/consent"
	"github.com/questbox/questbox/internal/clock"
)

// BootChase is how long the LEDs chase at least after start-up: two rounds
// of the chase, so the start is visible and every LED is seen to work (a
// lamp test at each boot), even though the daemon is ready in milliseconds.
const BootChase = 1500 * time.Millisecond

// storeRetry is how long the box waits before reading events again after
// the store failed to give them.
const storeRetry = 5 * time.Second

// ErrNotSimulated is returned by Press on a box whose button is real:
// consent from hardware stays physical (docs/design.md, "Device backends").
var ErrNotSimulated = errors.New("the button is real on this box: consent from hardware stays physical")

// ErrStopping is returned by Press when the box stops before the presses
// were handled.
var ErrStopping = errors.New("the box is stopping")

// Options configure a Box.
type Options struct {
	// ACT, if not nil, mirrors the worst state on the Pi's ACT LED.
	ACT *device.ACT
	// ButtonPin is the button's BCM number, for Status (negative: not
	// fitted).
	ButtonPin int
	Log       *slog.Logger
	// Clock is the time source (default clock.Real): the boot chase, the
	// consent deadlines and the retries after a store failure wait on it.
	Clock clock.Clock
}

// Broker is the MQTT connection as the box shows it.
type Broker struct {
	Configured bool   `json:"configured"`
	Connected  bool   `json:"connected"`
	Error      string `json:"error,omitempty"` // the last connection error
	// Fault marks an error a person must fix (authentication, TLS,
	// configuration), shown on the red LED; a broker that is simply down
	// is not a fault.
	Fault bool `json:"fault,omitempty"`
}

// Box is the daemon's device side. Its goroutines are started by Run.
// Every method is safe for concurrent use.
type Box struct {
	dev     *device.Device
	act     *device.ACT
	log     *slog.Logger
	clock   clock.Clock
	pin     int
	started time.Time
	presses pressLog
	poke    chan struct{} // capacity 1: "recompute the state", coalesced

	showMu sync.Mutex // serialises show

	attachOnce sync.Once
	attached   chan struct{} // closed by the first Attach

	mu      sync.Mutex // guards the fields below
	eng     *engine.Engine
	halt    error // the store is refused: no engine, only the fault shows
	ready   bool
	tickErr string
	readErr string
	notice  string // a fault that stays until Notice("") (a rolled-back update)
	offline bool   // the network probe's last word
	broker  Broker
	stopped <-chan struct{} // done when Run's context ends (nil before Run)
}

// New returns a box over dev. It shows "starting" until SetReady, and
// knows no quests until Attach.
func New(dev *device.Device, opt Options) *Box {
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if opt.Clock == nil {
		opt.Clock = clock.Real{}
	}
	return &Box{dev: dev, act: opt.ACT, log: opt.Log, clock: opt.Clock, pin: opt.ButtonPin, started: opt.Clock.Now(),
		poke: make(chan struct{}, 1), attached: make(chan struct{})}
}

// Run runs the box's goroutines until ctx is done: the device (LEDs and
// button), the state loop, the event watcher and the ACT mirror. It
// returns only a device failure (a pin that cannot be driven), nil when
// ctx ended; the LEDs are dark when it returns.
func (b *Box) Run(ctx context.Context) error {
	b.mu.Lock()
	b.stopped = ctx.Done()
	b.mu.Unlock()
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		err := b.dev.Run(gctx, consentQueue{b}, b.pressed)
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("gpio: %w", err)
	})
	g.Go(func() error { b.loop(gctx); return nil })
	g.Go(func() error { b.watch(gctx); return nil })
	if b.act != nil {
		g.Go(func() error { return b.act.Run(gctx) })
	}
	return g.Wait()
}

// Attach gives the box its engine once the store is open; it ends a Halt.
func (b *Box) Attach(eng *engine.Engine) {
	b.mu.Lock()
	b.eng, b.halt = eng, nil
	b.mu.Unlock()
	b.attachOnce.Do(func() { close(b.attached) })
	b.wake()
}

// Halt shows that the store is refused (corrupt, or from a newer
// questbox): green dark, red blinking fast, until Attach.
func (b *Box) Halt(err error) {
	b.mu.Lock()
	b.halt = err
	b.mu.Unlock()
	b.wake()
}

// SetReady ends the start-up chase (after BootChase at the earliest).
func (b *Box) SetReady() {
	b.mu.Lock()
	b.ready = true
	b.mu.Unlock()
	b.wake()
}

// SetOnline records the network probe's result. It does not block.
func (b *Box) SetOnline(online bool) {
	b.mu.Lock()
	b.offline = !online
	b.mu.Unlock()
	b.wake()
}

// SetBroker records the MQTT connection's state. It does not block.
func (b *Box) SetBroker(s Broker) {
	b.mu.Lock()
	b.broker = s
	b.mu.Unlock()
	b.wake()
}

// Notice shows a fault that stays until Notice("") — what the daemon
// shows after an update was rolled back: the box runs, but what was
// meant to happen did not. Other faults (a store, a tick) win over it.
func (b *Box) Notice(s string) {
	b.mu.Lock()
	b.notice = s
	b.mu.Unlock()
	b.wake()
}

// Ticked records the outcome of a tick: a failed tick is a fault until the
// next one succeeds.
func (b *Box) Ticked(err error) {
	b.mu.Lock()
	b.tickErr = ""
	if err != nil {
		b.tickErr = "tick: " + err.Error()
	}
	b.mu.Unlock()
	b.wake()
}

func (b *Box) wake() {
	select {
	case b.poke <- struct{}{}:
	default:
	}
}

// Engine is the engine the box shows (nil before Attach): the API lists
// its consent queue beside the box's status.
func (b *Box) Engine() *engine.Engine {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.eng
}

// watch wakes the state loop after every batch of engine events.
func (b *Box) watch(ctx context.Context) {
	select {
	case <-ctx.Done():
		return
	case <-b.attached:
	}
	for ctx.Err() == nil {
		b.follow(ctx, b.Engine())
	}
}

// follow wakes the loop when eng's events come (without reading them:
// the state is read afresh anyway) until ctx ends or the store fails
// (then after a pause).
func (b *Box) follow(ctx context.Context, eng *engine.Engine) {
	sub := eng.Subscribe(eng.LastSeq())
	defer sub.Close()
	for {
		err := sub.Await(ctx)
		if ctx.Err() != nil {
			return
		}
		b.mu.Lock()
		b.readErr = ""
		if err != nil {
			b.readErr = "store: reading events: " + err.Error()
		}
		b.mu.Unlock()
		b.wake()
		if err == nil {
			continue
		}
		_ = clock.Sleep(ctx, b.clock, storeRetry) // ctx ending is checked by the caller
		// Try again: the next read sets the fault again if the store is
		// still failing.
		b.mu.Lock()
		b.readErr = ""
		b.mu.Unlock()
		b.wake()
		return // resubscribe from the newest event
	}
}

// loop keeps the LEDs in step until ctx is done. It sleeps until woken by
// an event, a tick or the next deadline of its own (end of the boot chase,
// a consent expiring): an idle box costs nothing here.
func (b *Box) loop(ctx context.Context) {
	var timer clock.Timer
	var fire <-chan time.Time
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		next := b.update()
		if timer != nil {
			timer.Stop()
		}
		fire = nil
		if !next.IsZero() {
			timer = b.clock.NewTimer(max(0, next.Sub(b.clock.Now())))
			fire = timer.C()
		}
		select {
		case <-ctx.Done():
			return
		case <-b.poke:
		case <-fire:
		}
	}
}

// update recomputes the state, shows it, expires consents past their
// deadline, and returns when it must run again by itself (zero: only when
// woken).
func (b *Box) update() (next time.Time) {
	now := b.clock.Now()
	st, live, expired := b.show(now)
	eng := b.Engine()
	if expired > 0 && eng != nil {
		// The engine sends them back to pending with a consent "expired"
		// event (it also does so at every tick), and the agent runs again.
		if _, err := eng.ExpireConsents(); err != nil {
			b.log.Error("could not expire consent requests", "err", err)
		}
	}
	soon := func(t time.Time) {
		if t.After(now) && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	if st.Starting {
		soon(b.started.Add(BootChase))
	}
	for _, r := range live {
		if d, ok := eng.ConsentDeadline(r); ok {
			soon(d)
		}
	}
	return next
}

// show computes the state at now and puts it on the LEDs. Computing and
// showing happen under showMu, so a state computed earlier never replaces
// one computed later.
func (b *Box) show(now time.Time) (st device.State, live []engine.ConsentRequest, expired int) {
	b.showMu.Lock()
	defer b.showMu.Unlock()
	st, live, expired = b.state(now)
	b.dev.SetState(st)
	if b.act != nil {
		b.act.Set(device.Worst(st))
	}
	return st, live, expired
}

// state is the box's state now, with the live (unexpired) consent
// requests and how many have expired.
func (b *Box) state(now time.Time) (st device.State, live []engine.ConsentRequest, expired int) {
	b.mu.Lock()
	eng, halt := b.eng, b.halt
	starting := !b.ready || now.Before(b.started.Add(BootChase))
	fault := b.readErr
	if fault == "" {
		fault = b.tickErr
	}
	if fault == "" && b.broker.Fault {
		fault = "broker: " + b.broker.Error
	}
	if fault == "" {
		fault = b.notice
	}
	offline := b.offline
	b.mu.Unlock()
	if halt != nil {
		return device.State{Fault: "store: " + halt.Error(), Halted: true}, nil, 0
	}
	st = device.State{Starting: starting, Offline: offline}
	if eng == nil {
		st.Starting = true
		return st, nil, 0
	}
	act, err := eng.ActivityCounts(now)
	if err != nil && fault == "" {
		fault = "store: " + err.Error()
	}
	if n, err := eng.Unrecorded(); n > 0 && fault == "" {
		fault = fmt.Sprintf("store: %d run result(s) wait to be recorded: %v", n, err)
	}
	st.ConsentsPending, st.AgentsRunning, st.Fault = len(act.Consents), act.AgentsRunning, fault
	st.QuestsTerminated, st.TeamsBlocked = act.NeedAttention, act.TeamsBlocked
	return st, act.Consents, act.Expired
}

// pressed reports a press of the button as a device event (docs/design.md,
// "The consent button": every press is an event).
func (b *Box) pressed(p device.Press, outcome string) {
	b.presses.record(p, outcome)
	b.log.Info("button pressed", "press", p.String(), "outcome", outcome)
	eng := b.Engine()
	if eng == nil {
		return
	}
	if err := eng.RecordDeviceEvent(engine.DeviceEvent{What: engine.DevicePress, Press: p.Kind.String(), Result: outcome}); err != nil {
		b.log.Error("could not record the button press", "press", p.String(), "outcome", outcome, "err", err)
	}
}

// consentQueue is the engine's consent queue as the button sees it:
// expired requests are left out, and every decision is "by button".
type consentQueue struct{ b *Box }

// Pending implements device.ConsentQueue.
func (q consentQueue) Pending() ([]device.ConsentRequest, error) {
	eng := q.b.Engine()
	if eng == nil {
		return nil, nil
	}
	act, err := eng.ActivityCounts(q.b.clock.Now())
	if err != nil {
		return nil, err
	}
	out := make([]device.ConsentRequest, len(act.Consents))
	for i, r := range act.Consents {
		out[i] = device.ConsentRequest{Node: r.Node, Quest: r.Quest, ClaimHash: r.ClaimHash, Since: r.Since}
	}
	return out, nil
}

// Approve implements device.ConsentQueue. The press is the L3 consent: a
// consent.Consent from the button, bound to the claim hash the queue showed.
func (q consentQueue) Approve(node, claimHash string) error {
	return q.decide(node, claimHash, (*engine.Engine).Approve)
}

// Reject implements device.ConsentQueue.
func (q consentQueue) Reject(node, claimHash string) error {
	return q.decide(node, claimHash, (*engine.Engine).Reject)
}

func (q consentQueue) decide(node, claimHash string, fn func(*engine.Engine, string, consent.Consent) error) error {
	eng := q.b.Engine()
	if eng == nil {
		return errors.New("the store is not open")
	}
	c, err := consent.New(consent.Button{}, claimHash)
	if err != nil {
		return err
	}
	return fn(eng, node, c)
}
