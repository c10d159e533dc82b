package device

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"periph.io/x/conn/v3/gpio"

	"github.com/questbox/questbox/internal/clock"
)

// DefaultEdgePoll is how long Button waits on the pin before checking its context
// again. WaitForEdge(-1) misbehaves on periph's GPIO character-device driver, so
// Button always waits with a finite timeout; this bounds how long Run takes to
// return after its context is cancelled, at the cost of that many idle wake-ups.
const DefaultEdgePoll = 250 * time.Millisecond

// ButtonConfig describes the consent button's wiring and timing.
type ButtonConfig struct {
	Timing
	// ActiveHigh means the pin reads High while pressed (button to 3V3). The
	// default is active-low (button to ground, docs/design.md, "The consent
	// button").
	ActiveHigh bool
	// Pull is the internal resistor to enable: gpio.PullUp for the default
	// active-low wiring, gpio.PullDown for active-high, gpio.Float with an
	// external resistor.
	Pull gpio.Pull
}

// Button reads the consent button and classifies its gestures. Its edges come
// from a pin or, for the simulator, from Play.
type Button struct {
	pin   gpio.PinIn // nil: simulated, edges arrive only through Play
	cfg   ButtonConfig
	clock clock.Clock
	poll  time.Duration

	samples chan sample        // pin reader and Play → Run
	syncc   chan chan struct{} // test hook: process due timers, then acknowledge
	traced  func()             // test hook: called after each sample is processed; set before Run
	started func()             // test hook: called once the pin is configured; set before Run

	mu      sync.Mutex    // guards stopped and up
	stopped chan struct{} // non-nil while Run runs; closed when it returns
	up      chan struct{} // closed when Run starts; replaced when it returns
}

// sample is one raw level change, or a scripted sequence of them (Play).
type sample struct {
	pressed bool
	at      time.Time

	script []step        // non-nil: play these instead, offsets from a base time
	end    time.Duration // with script: process deadlines up to base+end
	done   chan struct{} // closed once processed; nil for pin edges
}

type step struct {
	pressed bool
	off     time.Duration
}

// NewButton returns a Button reading pin (nil for a simulated button). Call Run.
func NewButton(pin gpio.PinIn, cfg ButtonConfig, clk clock.Clock) *Button {
	return &Button{
		pin:     pin,
		cfg:     cfg,
		clock:   clk,
		poll:    DefaultEdgePoll,
		samples: make(chan sample, 64),
		syncc:   make(chan chan struct{}),
		up:      make(chan struct{}),
	}
}

// ErrNotRunning is returned by Button.Play and Device.Press when Run stops
// before the presses were handled.
var ErrNotRunning = errors.New("device: stopped before the press was handled")

// ErrBusy is returned by Button.Run, Device.Run and Selftest when the button is
// already being read.
var ErrBusy = errors.New("device: already running")

// Play presses the button times times, each held for hold, as a simulator
// does, and returns once every resulting press has been reported (a Short too:
// the multi-press gap is played out). It runs in virtual time: the edges are fed
// to the classifier with the timestamps a person would produce (presses spaced
// halfway between the debounce window and the multi-press gap) without waiting
// for them, so "hold 2s" approves at once. The classifier's clock then runs
// ahead of the real one by the length of the sequence; edges arriving meanwhile
// are dated at its end.
//
// hold is raised to twice the debounce window (default 100 ms) so a press is
// never mistaken for chatter; times below 1 count as 1.
func (b *Button) Play(ctx context.Context, hold time.Duration, times int) error {
	t := b.cfg.Timing.withDefaults()
	hold = max(hold, 2*t.Debounce)
	times = max(times, 1)
	between := (t.Debounce + t.MultiPressGap) / 2
	var (
		steps []step
		off   time.Duration
	)
	for i := range times {
		if i > 0 {
			off += between
		}
		steps = append(steps, step{true, off}, step{false, off + hold})
		off += hold
	}
	return b.send(ctx, sample{script: steps, end: off + t.MultiPressGap + t.Debounce})
}

// send hands s to Run, waiting for Run to start if need be, and waits until
// it has been processed.
func (b *Button) send(ctx context.Context, s sample) error {
	var stopped chan struct{}
	for stopped == nil {
		b.mu.Lock()
		var up chan struct{}
		stopped, up = b.stopped, b.up
		b.mu.Unlock()
		if stopped != nil {
			break
		}
		select {
		case <-up:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	s.done = make(chan struct{})
	select {
	case b.samples <- s:
	case <-stopped:
		return ErrNotRunning
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-s.done:
		return nil
	case <-stopped:
	case <-ctx.Done():
	}
	// Run may have handled s and then stopped (a press that ends a Selftest
	// does exactly that): handled wins over stopped.
	select {
	case <-s.done:
		return nil
	default:
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return ErrNotRunning
}

// ButtonEvents receives what Run sees. Both are called on Run's goroutine, in
// order; while they run, edges are buffered and keep their own timestamps, so a
// slow handler delays presses but does not change how they are classified.
type ButtonEvents struct {
	// Down is called when a debounced press starts (nil: ignored).
	Down func(at time.Time)
	// Press is called for each recognised gesture (nil: ignored).
	Press func(Press)
}

// Run configures the pin as an input with edge detection and reports the
// button's gestures to ev until ctx is done. It owns one extra goroutine (the
// pin reader), which has returned by the time Run returns. The error is ctx's,
// or why the pin could not be configured.
func (b *Button) Run(ctx context.Context, ev ButtonEvents) error {
	release, err := b.claim()
	if err != nil {
		return err
	}
	defer release()

	pressed := false
	if b.pin != nil {
		if err := b.pin.In(b.cfg.Pull, gpio.BothEdges); err != nil {
			return fmt.Errorf("device: button pin %s: %w", b.pin.Name(), err)
		}
		pressed = b.level(b.pin.Read())
	}
	r := &buttonRun{b: b, ev: ev, c: NewClassifier(b.cfg.Timing, pressed, b.clock.Now()), timer: &lazyTimer{clk: b.clock}}

	ctx, cancel := context.WithCancel(ctx)
	readerDone := make(chan struct{})
	defer func() {
		cancel()
		<-readerDone
	}()
	go func() {
		defer close(readerDone)
		b.read(ctx)
	}()

	defer r.timer.Stop()
	if b.started != nil {
		b.started()
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case s := <-b.samples:
			r.sample(s)
		case <-r.timer.C():
			r.tick()
		case ack := <-b.syncc:
			select {
			case <-r.timer.C():
				r.tick()
			default:
			}
			close(ack)
		}
	}
}

// claim marks the button as running, or returns ErrBusy when a Run
// already is; release, once Run returns, marks it stopped again.
func (b *Button) claim() (release func(), err error) {
	stopped := make(chan struct{})
	b.mu.Lock()
	if b.stopped != nil {
		b.mu.Unlock()
		return nil, ErrBusy
	}
	b.stopped = stopped
	close(b.up)
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		b.stopped = nil
		b.up = make(chan struct{})
		b.mu.Unlock()
		close(stopped)
	}, nil
}

// buttonRun is one Run's classifier and deadline timer, used only by the
// goroutine of that Run.
type buttonRun struct {
	b     *Button
	ev    ButtonEvents
	c     *Classifier
	timer *lazyTimer
}

// sample feeds one pin edge, or a played script of them, to the
// classifier, then arms the timer for its next deadline.
func (r *buttonRun) sample(s sample) {
	if s.script == nil {
		r.edge(s.pressed, s.at)
	} else {
		base := r.b.clock.Now()
		if r.c.now.After(base) {
			base = r.c.now
		}
		for _, st := range s.script {
			r.edge(st.pressed, base.Add(st.off))
		}
		r.advance(base.Add(s.end))
	}
	r.rearm()
	if r.b.traced != nil {
		r.b.traced()
	}
	if s.done != nil {
		close(s.done)
	}
}

// rearm sets the timer to the classifier's next deadline, if it has one.
func (r *buttonRun) rearm() {
	r.timer.Stop()
	if at, ok := r.c.Deadline(); ok {
		r.timer.Reset(at.Sub(r.b.clock.Now()))
	}
}

// report passes the gestures to ev.Press, and a press that started since
// (wasDown is the state before) to ev.Down.
func (r *buttonRun) report(wasDown bool, ps []Press) {
	for _, p := range ps {
		if r.ev.Press != nil {
			r.ev.Press(p)
		}
	}
	if !wasDown && r.c.Pressed() && r.ev.Down != nil {
		r.ev.Down(r.c.downAt)
	}
}

// advance processes the deadlines up to to one at a time, so that a
// press that settles and a gesture it completes, both due, are reported
// in their order: Down before the Long it starts. (Tick would fire both
// and report the Down last, leaving the Panel a snapshot taken after
// the gesture.)
func (r *buttonRun) advance(to time.Time) {
	for {
		at, ok := r.c.Deadline()
		if !ok || at.After(to) {
			return
		}
		wasDown := r.c.Pressed()
		r.report(wasDown, r.c.Tick(at))
	}
}

// tick processes the deadlines up to now.
func (r *buttonRun) tick() {
	r.advance(r.b.clock.Now())
	r.rearm()
}

// edge processes the deadlines up to at, then the edge itself.
func (r *buttonRun) edge(pressed bool, at time.Time) {
	r.advance(at)
	wasDown := r.c.Pressed()
	r.report(wasDown, r.c.Edge(pressed, at))
}

// read forwards pin edges to Run until ctx is done. Levels are read and
// timestamped as soon as WaitForEdge reports an edge.
func (b *Button) read(ctx context.Context) {
	if b.pin == nil {
		return
	}
	for ctx.Err() == nil {
		if !b.pin.WaitForEdge(b.poll) {
			continue
		}
		s := sample{pressed: b.level(b.pin.Read()), at: b.clock.Now()}
		select {
		case b.samples <- s:
		case <-ctx.Done():
			return
		}
	}
}

func (b *Button) level(l gpio.Level) bool {
	return bool(l) == b.cfg.ActiveHigh
}
