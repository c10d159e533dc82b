package device_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/questbox/questbox/device"
	"github.com/questbox/questbox/internal/clock/clocktest"
	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpiotest"
)

// buttonRig runs a Button on a gpiotest pin with a fake clock.
type buttonRig struct {
	t       *testing.T
	clk     *clocktest.Clock
	pin     *gpiotest.Pin
	b       *device.Button
	presses chan device.Press
	downs   chan time.Time
	edges   chan struct{} // one value per processed edge
}

func newButtonRig(t *testing.T, cfg device.ButtonConfig) *buttonRig {
	t.Helper()
	r := &buttonRig{
		t:       t,
		clk:     clocktest.NewClock(t0),
		pin:     &gpiotest.Pin{N: "GPIO23", Num: 23, EdgesChan: make(chan gpio.Level)},
		presses: make(chan device.Press, 16),
		downs:   make(chan time.Time, 16),
		edges:   make(chan struct{}, 64),
	}
	r.b = device.NewButton(r.pin, cfg, r.clk)
	r.b.Trace(func() { r.edges <- struct{}{} })
	r.b.SetPoll(5 * ms)
	started := make(chan struct{})
	r.b.OnStart(func() { close(started) })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- r.b.Run(ctx, device.ButtonEvents{
			Down:  func(at time.Time) { r.downs <- at },
			Press: func(p device.Press) { r.presses <- p },
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run returned %v, want context.Canceled", err)
		}
	})
	<-started // edges sent before In() would be flushed by it
	return r
}

// edge sets the pin to l as the hardware would and waits until Run has
// processed it.
func (r *buttonRig) edge(l gpio.Level) {
	r.pin.EdgesChan <- l
	<-r.edges
}

// press and release for the default active-low wiring.
func (r *buttonRig) down() { r.edge(gpio.Low) }
func (r *buttonRig) up()   { r.edge(gpio.High) }

// advance moves the clock and waits until Run has handled what fired.
func (r *buttonRig) advance(d time.Duration) {
	r.clk.Advance(d)
	r.b.Sync()
}

// got drains the presses reported so far.
func (r *buttonRig) got() []device.Press {
	var out []device.Press
	for {
		select {
		case p := <-r.presses:
			out = append(out, p)
		default:
			return out
		}
	}
}

func (r *buttonRig) want(kinds ...device.PressKind) []device.Press {
	r.t.Helper()
	got := r.got()
	if len(got) != len(kinds) {
		r.t.Fatalf("got presses %v, want %v", got, kinds)
	}
	for i, k := range kinds {
		if got[i].Kind != k {
			r.t.Fatalf("got presses %v, want %v", got, kinds)
		}
	}
	return got
}

func TestButtonChatterThenHoldIsOneLong(t *testing.T) {
	r := newButtonRig(t, device.ButtonConfig{Pull: gpio.PullUp})
	if r.pin.Pull() != gpio.PullUp {
		t.Fatalf("pull = %v, want %v", r.pin.Pull(), gpio.PullUp)
	}
	// Twelve edges 3 ms apart, then pressed: all within the debounce window.
	for i := range 12 {
		r.edge(gpio.Level(i%2 == 1)) // Low (pressed), High, Low, ...
		r.advance(3 * ms)
	}
	r.down()
	r.advance(1990 * ms)
	r.want() // not yet
	r.advance(100 * ms)
	p := r.want(device.Long)[0]
	if p.Held != 2*time.Second || p.Count != 1 {
		t.Errorf("got %+v, want held 2s, count 1", p)
	}
	if len(r.downs) != 1 {
		t.Errorf("got %d downs, want 1", len(r.downs))
	}
	// A chattering release after the long press reports nothing more.
	for i := range 9 {
		r.edge(gpio.Level(i%2 == 0))
		r.advance(2 * ms)
	}
	r.advance(5 * time.Second)
	r.want()
}

func TestButtonShortDoubleTriple(t *testing.T) {
	r := newButtonRig(t, device.ButtonConfig{Pull: gpio.PullUp})
	tap := func() {
		r.down()
		r.advance(100 * ms)
		r.up()
	}

	tap()
	r.advance(399 * ms)
	r.want()
	r.advance(100 * ms)
	if p := r.want(device.Short)[0]; p.Count != 1 {
		t.Errorf("short: count = %d, want 1", p.Count)
	}

	tap()
	r.advance(200 * ms)
	tap()
	r.advance(time.Second)
	if p := r.want(device.Short)[0]; p.Count != 2 {
		t.Errorf("double: count = %d, want 2", p.Count)
	}

	tap()
	r.advance(200 * ms)
	tap()
	r.advance(200 * ms)
	tap()
	r.advance(50 * ms) // the third release settles: triple at once, no gap wait
	if p := r.want(device.Triple)[0]; p.Count != 3 {
		t.Errorf("triple: count = %d, want 3", p.Count)
	}
	r.advance(time.Second)
	r.want()
}

func TestButtonActiveHigh(t *testing.T) {
	r := newButtonRig(t, device.ButtonConfig{ActiveHigh: true, Pull: gpio.PullDown})
	r.edge(gpio.High)
	r.advance(2 * time.Second)
	r.want(device.Long)
	r.edge(gpio.Low)
	r.advance(time.Second)
	r.want()
}

func TestButtonThresholdsConfigurable(t *testing.T) {
	r := newButtonRig(t, device.ButtonConfig{Pull: gpio.PullUp,
		Timing: device.Timing{Debounce: 10 * ms, LongPress: 300 * ms, MultiPressGap: 100 * ms}})
	r.down()
	r.advance(299 * ms)
	r.want()
	r.advance(ms)
	r.want(device.Long)
}
