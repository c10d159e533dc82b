package main

// The box: the daemon's LEDs and consent button (package device) wired to
// its engine.
//
// What the LEDs show is recomputed from scratch on every batch of engine
// events, every tick and every consent deadline: the quests (their Counts,
// kept in step by the engine, so no node is scanned), the consent queue and
// the runs in flight. That is a couple of small bbolt reads — O(quests +
// pending consents) — and it cannot drift the way counting events could; a
// burst of events is one recomputation, because the subscription delivers
// them in batches and wake-ups are coalesced.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/questbox/questbox/config"
	"github.com/questbox/questbox/device"
	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/gates/consent"
)

// bootChase is how long the LEDs chase at least after start-up: two rounds
// of the chase, so the start is visible and every LED is seen to work (a
// lamp test at each boot), even though the daemon itself is ready in
// milliseconds.
const bootChase = 1500 * time.Millisecond

// deviceConfig is the device wiring of the gpio section.
func deviceConfig(g config.GPIO) device.Config {
	return device.Config{
		Backend:          g.Backend,
		Chip:             g.Chip,
		Green:            g.Green,
		Amber:            g.Amber,
		Red:              g.Red,
		Button:           g.Button,
		LEDsActiveLow:    g.ActiveLow,
		ButtonActiveHigh: g.ButtonActiveHigh,
		ButtonPull:       g.ButtonPull,
		Debounce:         g.Debounce.Duration,
		LongPress:        g.LongPress.Duration,
		MultiPressGap:    g.MultiPressGap.Duration,
	}
}

// openDevice opens the LEDs and button of g. A configured pin that does not
// exist on this machine (periph, or a chip that is not there) is a
// configuration that does not fit the hardware: exit 1, like a bad config.
// A pin that exists but cannot be claimed (held by another process, no
// permission) is a resource that is unavailable: exit 2, like a store in
// use.
func openDevice(g config.GPIO, log *slog.Logger) (*device.Device, error) {
	dev, err := device.Open(deviceConfig(g), log)
	switch {
	case err == nil:
		return dev, nil
	case errors.Is(err, device.ErrPinNotFound):
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("%w (gpio.backend or --gpio is %s; a machine without these pins needs auto or sim)", err, g.Backend)}
	}
	if _, ok := errors.AsType[*device.PinError](err); ok {
		return nil, &exitError{code: exitStore, err: err}
	}
	return nil, &exitError{code: exitUsage, err: err}
}

// box is the daemon's device side: the LEDs and button, what they show, the
// ACT LED mirror and the consent queue the button acts on. Its goroutines
// are started by start and owned by the daemon's errgroup.
type box struct {
	dev     *device.Device
	act     *device.ACT // nil: no ACT mirror
	eng     *engine.Engine
	log     *slog.Logger
	cfg     config.GPIO
	expiry  time.Duration // consent_expiry; 0 = never
	now     func() time.Time
	started time.Time
	presses pressLog

	ctx  context.Context // done when the box stops (set by start)
	poke chan struct{}   // capacity 1: "recompute the state", coalesced

	mu      sync.Mutex // guards ready, tickErr, readErr, offline
	ready   bool
	tickErr string
	readErr string
	offline bool // the network probe's last word
}

// newBox wires dev to eng, with an ACT LED mirror if mirrorOnACT.
func newBox(g config.GPIO, dev *device.Device, eng *engine.Engine, log *slog.Logger) *box {
	b := &box{dev: dev, eng: eng, log: log, cfg: g, expiry: g.ConsentExpiry.Duration, now: eng.Now,
		started: eng.Now(), poke: make(chan struct{}, 1), ctx: context.Background()}
	if mirrorOnACT(g, dev.Backend()) {
		b.act = device.NewACT(device.DefaultACTPath, nil, log)
	}
	return b
}

// mirrorOnACT reports whether the ACT LED mirrors the worst state:
// gpio.act_led is set and this box lights no external LED, because every
// LED pin is not fitted (negative) or the backend is the simulator.
func mirrorOnACT(g config.GPIO, backend string) bool {
	noLEDs := g.Green < 0 && g.Amber < 0 && g.Red < 0
	return g.ActLED && (noLEDs || backend == device.BackendSim)
}

// start runs the box's goroutines in g until ctx is done: the device (LEDs
// and button), the state loop, the event watcher and the ACT mirror. Only a
// device failure (a pin that cannot be configured) is an error, which stops
// the daemon.
func (b *box) start(ctx context.Context, g *errgroup.Group) {
	b.ctx = ctx
	g.Go(func() error {
		err := b.dev.Run(ctx, consentQueue{b}, b.pressed)
		if ctx.Err() != nil {
			return nil
		}
		return &exitError{code: exitStore, err: fmt.Errorf("gpio: %w", err)}
	})
	g.Go(func() error { b.loop(ctx); return nil })
	g.Go(func() error { b.watch(ctx); return nil })
	if b.act != nil {
		g.Go(func() error { return b.act.Run(ctx) })
	}
}

// setReady ends the start-up chase (after bootChase at the earliest).
func (b *box) setReady() {
	b.mu.Lock()
	b.ready = true
	b.mu.Unlock()
	b.wake()
}

// setOnline records the network probe's result (called from the probe's
// OnChange, so it must not block): offline flashes amber.
func (b *box) setOnline(online bool) {
	b.mu.Lock()
	b.offline = !online
	b.mu.Unlock()
	b.wake()
}

// ticked records the outcome of a tick: a failed tick is a fault until the
// next one succeeds.
func (b *box) ticked(err error) {
	b.mu.Lock()
	b.tickErr = ""
	if err != nil {
		b.tickErr = "tick: " + err.Error()
	}
	b.mu.Unlock()
	b.wake()
}

func (b *box) wake() {
	select {
	case b.poke <- struct{}{}:
	default:
	}
}

// watch wakes the state loop after every batch of engine events.
func (b *box) watch(ctx context.Context) {
	for ctx.Err() == nil {
		sub := b.eng.Subscribe(b.eng.LastSeq())
		for {
			_, err := sub.Next(ctx)
			if ctx.Err() != nil {
				break
			}
			b.mu.Lock()
			b.readErr = ""
			if err != nil && !errors.Is(err, engine.ErrEventsPruned) {
				b.readErr = "store: reading events: " + err.Error()
			}
			b.mu.Unlock()
			b.wake()
			if err != nil {
				break // resubscribe from the newest event (after a pause if the store failed)
			}
		}
		sub.Close()
		b.mu.Lock()
		failed := b.readErr != ""
		b.mu.Unlock()
		if failed {
			select {
			case <-ctx.Done():
			case <-time.After(5 * time.Second):
			}
			// Try again: the next read sets the fault again if the store
			// is still failing.
			b.mu.Lock()
			b.readErr = ""
			b.mu.Unlock()
			b.wake()
		}
	}
}

// loop keeps the LEDs in step until ctx is done. It sleeps until woken by
// an event, a tick or the next deadline of its own (end of the boot chase,
// a consent expiring): an idle box costs nothing here.
func (b *box) loop(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		next := b.update()
		timer.Stop()
		if !next.IsZero() {
			timer.Reset(max(0, next.Sub(b.now())))
		}
		select {
		case <-ctx.Done():
			return
		case <-b.poke:
		case <-timer.C:
		}
	}
}

// update recomputes the state, shows it, reports newly expired consents,
// and returns when it must run again by itself (zero: only when woken).
func (b *box) update() (next time.Time) {
	now := b.now()
	live, expired, err := b.consents(now)
	st, qerr := b.state(now, len(live), err)
	if qerr != nil {
		st.Fault = "store: " + qerr.Error()
	}
	b.dev.SetState(st)
	if b.act != nil {
		b.act.Set(device.Worst(st))
	}
	b.reportExpired(expired)

	soon := func(t time.Time) {
		if t.After(now) && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	if st.Starting {
		soon(b.started.Add(bootChase))
	}
	if b.expiry > 0 {
		for _, r := range live {
			soon(r.Since.Add(b.expiry))
		}
	}
	return next
}

// state is the box's state now, with pending live consents.
func (b *box) state(now time.Time, pending int, cerr error) (device.State, error) {
	b.mu.Lock()
	starting := !b.ready || now.Before(b.started.Add(bootChase))
	fault := b.readErr
	if fault == "" {
		fault = b.tickErr
	}
	offline := b.offline
	b.mu.Unlock()
	if cerr != nil && fault == "" {
		fault = "store: reading consents: " + cerr.Error()
	}
	if n, err := b.eng.Unrecorded(); n > 0 && fault == "" {
		fault = fmt.Sprintf("store: %d run result(s) wait to be recorded: %v", n, err)
	}
	qs, err := b.eng.Quests()
	st := boxState(qs, pending, b.eng.InFlight(), fault)
	st.Starting, st.Offline = starting, offline
	return st, err
}

// boxState maps the engine's view to the LEDs' (SPEC §5.1):
//
//   - AgentsRunning: nodes running, or runs in flight if more (a run's slot
//     frees just before its verdict commits).
//   - QuestsTerminated: quests that need their owner — terminated by a
//     budget, or stopped for any reason other than `quest stop` (no
//     progress, a provider that is not configured). Exhausted nodes are the
//     normal end of max_tries and do not light red; a done quest neither.
//   - Fault: the last tick failed, the store cannot be read, or a run's
//     result cannot be written (the engine keeps retrying it).
//
// Offline is not the engine's: the box sets it from the network probe
// (setOnline).
func boxState(qs []*engine.Quest, pendingConsents, inFlight int, fault string) device.State {
	st := device.State{ConsentsPending: pendingConsents, Fault: fault}
	running := 0
	for _, q := range qs {
		running += q.Counts[engine.Running]
		if q.NeedsAttention() {
			st.QuestsTerminated++
		}
	}
	st.AgentsRunning = max(running, inFlight)
	return st
}

// consents splits the engine's consent queue (oldest first) into live
// requests and those older than consent_expiry.
func (b *box) consents(now time.Time) (live, expired []engine.ConsentRequest, err error) {
	all, err := b.eng.Consents()
	if err != nil {
		return nil, nil, err
	}
	for _, r := range all {
		if b.isExpired(r, now) {
			expired = append(expired, r)
			continue
		}
		live = append(live, r)
	}
	return live, expired, nil
}

func (b *box) isExpired(r engine.ConsentRequest, now time.Time) bool {
	return b.expiry > 0 && !now.Before(r.Since.Add(b.expiry))
}

// reportExpired asks the engine to expire the requests whose deadline
// passed (it also does so at every tick): each goes back to pending with a
// consent "expired" event, and the agent runs again.
func (b *box) reportExpired(expired []engine.ConsentRequest) {
	if len(expired) == 0 {
		return
	}
	if _, err := b.eng.ExpireConsents(); err != nil {
		b.log.Error("could not expire consent requests", "err", err)
	}
}

// pressed reports a press of the button as a device event (SPEC §5.2:
// every press is an event).
func (b *box) pressed(p device.Press, outcome string) {
	b.presses.record(p, outcome)
	b.log.Info("button pressed", "press", p.String(), "outcome", outcome)
	if err := b.eng.RecordDevice("press", p.Kind.String()+" "+outcome); err != nil {
		b.log.Error("could not record the button press", "press", p.String(), "outcome", outcome, "err", err)
	}
}

// consentQueue is the engine's consent queue as the button sees it:
// expired requests are left out, and every decision is "by button".
type consentQueue struct{ b *box }

// Pending implements device.ConsentQueue.
func (q consentQueue) Pending() ([]device.ConsentRequest, error) {
	live, _, err := q.b.consents(q.b.now())
	if err != nil {
		return nil, err
	}
	out := make([]device.ConsentRequest, len(live))
	for i, r := range live {
		out[i] = device.ConsentRequest{Node: r.Node, Quest: r.Quest, ClaimHash: r.ClaimHash, Since: r.Since}
	}
	return out, nil
}

// Approve implements device.ConsentQueue. The press is the L3 consent: a
// consent.Consent from the button, bound to the claim hash the queue showed.
func (q consentQueue) Approve(node, claimHash string) error {
	c, err := consent.New(consent.Button{}, claimHash)
	if err != nil {
		return err
	}
	return q.b.eng.Approve(node, c)
}

// Reject implements device.ConsentQueue.
func (q consentQueue) Reject(node, claimHash string) error {
	c, err := consent.New(consent.Button{}, claimHash)
	if err != nil {
		return err
	}
	return q.b.eng.Reject(node, c)
}

// pressResult is one press and what the box did with it.
type pressResult struct {
	Press   string `json:"press"` // "long (2s)"
	Kind    string `json:"kind"`  // "long"
	Outcome string `json:"outcome"`
}

// pressLog collects the presses of one `device press` request.
type pressLog struct {
	cmd sync.Mutex // serialises requests, so each sees only its own presses

	mu     sync.Mutex // guards active and got
	active bool
	got    []pressResult
}

func (l *pressLog) record(p device.Press, outcome string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.active {
		l.got = append(l.got, pressResult{Press: p.String(), Kind: p.Kind.String(), Outcome: outcome})
	}
}

// play presses the simulated button and returns what the presses did.
func (l *pressLog) play(ctx context.Context, dev *device.Device, hold time.Duration, times int) ([]pressResult, error) {
	l.cmd.Lock()
	defer l.cmd.Unlock()
	l.mu.Lock()
	l.active, l.got = true, nil
	l.mu.Unlock()
	err := dev.Press(ctx, hold, times)
	l.mu.Lock()
	got := l.got
	l.active, l.got = false, nil
	l.mu.Unlock()
	return got, err
}
