package device

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"periph.io/x/conn/v3/gpio"

	"github.com/questbox/questbox/internal/clock"
)

// LED positions, also the index a chase uses.
const (
	green = iota
	amber
	red
	numLEDs
)

var ledNames = [numLEDs]string{"green", "amber", "red"}

// Press echo and count blink timings. Echo is lit then dark so the wink shows on
// a solid green too; count blinks start after a dark pause so the first blink is
// not lost in whatever amber was showing.
const (
	echoOn         = 100 * time.Millisecond
	echoOff        = 50 * time.Millisecond
	countLead      = 400 * time.Millisecond
	countOn        = 200 * time.Millisecond
	countOff       = 300 * time.Millisecond
	countTail      = 200 * time.Millisecond
	maxCountBlinks = 9 // "9" means nine or more; longer counts are unreadable anyway
)

// DriverConfig says which pins a Driver drives. A nil pin is an LED that is not
// fitted: its pattern is still tracked (for Levels and the dashboard).
type DriverConfig struct {
	Green, Amber, Red gpio.PinOut
	// ActiveLow drives a pin Low to light its LED (LED wired to 3V3 through a
	// resistor). The default is active-high (docs/design.md, "The LEDs").
	ActiveLow bool
	// Log receives pin write failures, once per pin. Nil discards them.
	Log *slog.Logger
}

// Driver plays LED patterns on pins. Set, Echo, BlinkCount, Levels and LEDs are
// safe for concurrent use and never block; Run does the pin writes, sleeping
// until the next level change of any LED (solid and off patterns need no wake-ups
// at all).
type Driver struct {
	clock clock.Clock
	pins  [numLEDs]gpio.PinOut
	cfg   DriverConfig
	// activeLow is cfg.ActiveLow, or what SetActiveLow set since.
	activeLow atomic.Bool
	wake      chan struct{}      // capacity 1: "patterns changed", coalesced
	syncc     chan chan struct{} // test hook: run one pass, then acknowledge

	mu       sync.Mutex // guards pats, starts and overlays
	pats     [numLEDs]Pattern
	starts   [numLEDs]time.Time // when each pattern (re)started, for its phase
	overlays [numLEDs]overlay
}

// overlay is a finite sequence shown instead of an LED's pattern (press echo,
// count blinks); after it ends the pattern shows again.
type overlay struct {
	start time.Time
	spans []span // nil: no overlay
}

type span struct {
	on bool
	d  time.Duration
}

// NewDriver returns a Driver with every LED off. Call Run to drive the pins.
func NewDriver(cfg DriverConfig, clk clock.Clock) *Driver {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	now := clk.Now()
	d := &Driver{
		clock:  clk,
		pins:   [numLEDs]gpio.PinOut{cfg.Green, cfg.Amber, cfg.Red},
		cfg:    cfg,
		wake:   make(chan struct{}, 1),
		syncc:  make(chan chan struct{}),
		starts: [numLEDs]time.Time{now, now, now},
	}
	d.activeLow.Store(cfg.ActiveLow)
	return d
}

// SetActiveLow changes how a lit LED is driven (DriverConfig.ActiveLow),
// for LEDs rewired while the daemon runs (its reload): Run writes every
// pin again at once, with the new polarity.
func (d *Driver) SetActiveLow(low bool) {
	if d.activeLow.Swap(low) != low {
		d.poke()
	}
}

// Set shows l. An LED whose pattern is unchanged keeps its phase, so repeated
// Sets of the same state do not make blinks stutter.
func (d *Driver) Set(l LEDs) {
	now := d.clock.Now()
	d.mu.Lock()
	for i, p := range [numLEDs]Pattern{l.Green, l.Amber, l.Red} {
		if d.pats[i] != p {
			d.pats[i], d.starts[i] = p, now
		}
	}
	d.mu.Unlock()
	d.poke()
}

// LEDs returns the patterns last Set.
func (d *Driver) LEDs() LEDs {
	d.mu.Lock()
	defer d.mu.Unlock()
	return LEDs{Green: d.pats[green], Amber: d.pats[amber], Red: d.pats[red]}
}

// Echo acknowledges a button press on green: lit for 100 ms, then dark for 50 ms,
// overriding green's pattern for those 150 ms.
func (d *Driver) Echo() {
	d.overlay(green, []span{{true, echoOn}, {false, echoOff}})
}

// BlinkCount shows n on amber: a dark pause, n short blinks (at most 9), a dark
// pause, then amber's pattern again. n <= 0 does nothing.
func (d *Driver) BlinkCount(n int) {
	if n <= 0 {
		return
	}
	n = min(n, maxCountBlinks)
	spans := []span{{false, countLead}}
	for range n {
		spans = append(spans, span{true, countOn}, span{false, countOff})
	}
	spans = append(spans, span{false, countTail})
	d.overlay(amber, spans)
}

func (d *Driver) overlay(i int, spans []span) {
	now := d.clock.Now()
	d.mu.Lock()
	d.overlays[i] = overlay{start: now, spans: spans}
	d.mu.Unlock()
	d.poke()
}

func (d *Driver) poke() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Levels reports whether each LED (green, amber, red) is lit now, by its
// pattern and any echo or count overlay.
func (d *Driver) Levels() [numLEDs]bool {
	lv, _, _ := d.frame(d.clock.Now())
	return lv
}

// frame computes every LED's level at now and the next time any may change.
func (d *Driver) frame(now time.Time) (lv [numLEDs]bool, next time.Time, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := range numLEDs {
		on, at, has := d.ledAt(i, now)
		lv[i] = on
		if has && (!ok || at.Before(next)) {
			next, ok = at, true
		}
	}
	return lv, next, ok
}

// ledAt returns LED i's level at now and its next change. Called with d.mu held.
func (d *Driver) ledAt(i int, now time.Time) (on bool, next time.Time, ok bool) {
	if o := &d.overlays[i]; o.spans != nil {
		end := o.start
		for _, s := range o.spans {
			end = end.Add(s.d)
			if now.Before(end) {
				return s.on, end, true
			}
		}
		o.spans = nil // finished: forget it
	}
	elapsed := now.Sub(d.starts[i])
	on = d.pats[i].On(elapsed, i)
	if t, ok := d.pats[i].next(elapsed); ok {
		return on, d.starts[i].Add(t), true
	}
	return on, time.Time{}, false
}

// Run drives the pins until ctx is done, then turns every LED off (a stopped
// daemon must not look healthy) and returns ctx's error. Run must be called at
// most once at a time.
func (d *Driver) Run(ctx context.Context) error {
	var (
		written [numLEDs]bool
		valid   bool // written holds what the pins show, at polarity low
		low     bool
		failed  [numLEDs]bool
	)
	write := func(lv [numLEDs]bool) {
		if l := d.activeLow.Load(); l != low {
			low, valid = l, false
		}
		for i, pin := range d.pins {
			if pin == nil || (valid && written[i] == lv[i]) {
				continue
			}
			if err := pin.Out(gpio.Level(lv[i] != low)); err != nil && !failed[i] {
				failed[i] = true
				d.cfg.Log.Warn("device: cannot drive LED", "led", ledNames[i], "pin", pin.Name(), "err", err)
			}
		}
		written, valid = lv, true
	}
	defer func() { write([numLEDs]bool{}) }()

	timer := &lazyTimer{clk: d.clock}
	defer timer.Stop()
	pass := func() {
		now := d.clock.Now()
		lv, next, ok := d.frame(now)
		write(lv)
		timer.Stop()
		if ok {
			timer.Reset(next.Sub(now))
		}
	}
	for {
		pass()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-d.wake:
		case <-timer.C():
		case ack := <-d.syncc:
			pass()
			close(ack)
		}
	}
}
