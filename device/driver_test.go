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

type driverRig struct {
	t     *testing.T
	clk   *clocktest.Clock
	pins  [3]*gpiotest.Pin
	d     *device.Driver
	low   bool
	start time.Time
}

func newDriverRig(t *testing.T, activeLow bool) *driverRig {
	t.Helper()
	r := &driverRig{t: t, clk: clocktest.NewClock(t0), low: activeLow, start: t0}
	for i, n := range []int{17, 27, 22} {
		r.pins[i] = &gpiotest.Pin{N: "GPIO", Num: n}
	}
	r.d = device.NewDriver(device.DriverConfig{Green: r.pins[0], Amber: r.pins[1], Red: r.pins[2], ActiveLow: activeLow}, r.clk)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run returned %v, want context.Canceled", err)
		}
		for i, p := range r.pins {
			if lit := bool(p.Read()) != r.low; lit {
				t.Errorf("LED %d still lit after Run returned", i)
			}
		}
	})
	return r
}

// at advances the clock to start+d and returns which LEDs the pins show.
func (r *driverRig) at(d time.Duration) [3]bool {
	r.t.Helper()
	now := r.clk.Now()
	target := r.start.Add(d)
	if target.Before(now) {
		r.t.Fatalf("BUG: at(%v) goes back in time", d)
	}
	r.clk.Advance(target.Sub(now))
	r.d.Sync()
	var lit [3]bool
	for i, p := range r.pins {
		lit[i] = bool(p.Read()) != r.low
	}
	if lv := r.d.Levels(); lv != lit {
		r.t.Errorf("at %v: Levels() = %v, pins show %v", d, lv, lit)
	}
	return lit
}

func (r *driverRig) expect(d time.Duration, want [3]bool) {
	r.t.Helper()
	if got := r.at(d); got != want {
		r.t.Errorf("at %v: lit = %v, want %v", d, got, want)
	}
}

func TestDriverSolidNeedsNoWakeups(t *testing.T) {
	r := newDriverRig(t, false)
	r.d.Set(device.Patterns(device.State{QuestsTerminated: 1}))
	r.expect(0, [3]bool{true, false, true})
	if n := r.clk.Timers(); n != 0 {
		t.Errorf("%d timers armed for solid/off patterns, want 0", n)
	}
	r.expect(time.Hour, [3]bool{true, false, true})
}

func TestDriverActiveLow(t *testing.T) {
	r := newDriverRig(t, true)
	r.d.Set(device.LEDs{Green: device.PatternSolid})
	r.expect(0, [3]bool{true, false, false})
	if r.pins[0].Read() != gpio.Low {
		t.Errorf("lit active-low pin reads %v, want Low", r.pins[0].Read())
	}
}

// SetActiveLow (a reload of gpio.leds_active_low) drives every pin again
// at once with the new polarity; what is lit stays lit.
func TestDriverSetActiveLow(t *testing.T) {
	r := newDriverRig(t, false)
	r.d.Set(device.LEDs{Green: device.PatternSolid})
	r.expect(0, [3]bool{true, false, false})
	r.d.SetActiveLow(true)
	r.low = true
	r.expect(0, [3]bool{true, false, false})
	if r.pins[0].Read() != gpio.Low || r.pins[1].Read() != gpio.High {
		t.Errorf("after SetActiveLow(true): green reads %v, amber %v; want Low (lit), High (dark)", r.pins[0].Read(), r.pins[1].Read())
	}
}

func TestDriverBlinkAndFlash(t *testing.T) {
	r := newDriverRig(t, false)
	r.d.Set(device.LEDs{Green: device.PatternRunning, Amber: device.PatternOffline, Red: device.PatternFault})
	for _, tc := range []struct {
		at   time.Duration
		want [3]bool
	}{
		{0, [3]bool{true, true, true}},
		{100 * ms, [3]bool{true, false, true}},
		{125 * ms, [3]bool{true, false, false}},
		{250 * ms, [3]bool{true, false, true}},
		{500 * ms, [3]bool{false, false, true}},
		{1000 * ms, [3]bool{true, false, true}},
		{1500 * ms, [3]bool{false, true, true}},
		{1600 * ms, [3]bool{false, false, true}},
	} {
		r.expect(tc.at, tc.want)
	}
	if n := r.clk.Timers(); n != 1 {
		t.Errorf("%d timers armed, want 1 (the next edge)", n)
	}
}

func TestDriverChase(t *testing.T) {
	r := newDriverRig(t, false)
	r.d.Set(device.Patterns(device.State{Starting: true}))
	r.expect(0, [3]bool{true, false, false})
	r.expect(250*ms, [3]bool{false, true, false})
	r.expect(500*ms, [3]bool{false, false, true})
	r.expect(750*ms, [3]bool{true, false, false})
}

func TestDriverSetKeepsPhaseOfUnchangedLEDs(t *testing.T) {
	r := newDriverRig(t, false)
	r.d.Set(device.LEDs{Green: device.PatternRunning})
	r.expect(600*ms, [3]bool{false, false, false})
	// Same green pattern again with a new amber: green keeps its phase.
	r.d.Set(device.LEDs{Green: device.PatternRunning, Amber: device.PatternSolid})
	r.expect(700*ms, [3]bool{false, true, false})
	r.expect(1000*ms, [3]bool{true, true, false})
	// A changed pattern restarts its phase.
	r.d.Set(device.LEDs{Green: device.PatternConsent})
	r.expect(1100*ms, [3]bool{true, false, false})
	r.expect(1350*ms, [3]bool{false, false, false})
}

func TestDriverEcho(t *testing.T) {
	r := newDriverRig(t, false)
	r.d.Set(device.LEDs{Green: device.PatternSolid})
	r.expect(time.Second, [3]bool{true, false, false})
	r.d.Echo()
	r.expect(time.Second+99*ms, [3]bool{true, false, false})
	r.expect(time.Second+100*ms, [3]bool{false, false, false}) // the wink
	r.expect(time.Second+150*ms, [3]bool{true, false, false})
	if n := r.clk.Timers(); n != 0 {
		t.Errorf("%d timers armed after the echo, want 0", n)
	}

	r.d.Set(device.LEDs{})
	r.expect(2*time.Second, [3]bool{false, false, false})
	r.d.Echo()
	r.expect(2*time.Second, [3]bool{true, false, false}) // a flash on a dark LED
	r.expect(2*time.Second+100*ms, [3]bool{false, false, false})
}

func TestDriverBlinkCount(t *testing.T) {
	r := newDriverRig(t, false)
	r.d.Set(device.Patterns(device.State{ConsentsPending: 2}))
	r.d.BlinkCount(2)
	var got []bool
	for at := time.Duration(0); at < 2*time.Second; at += 100 * ms {
		got = append(got, r.at(at)[1])
	}
	// 400 ms dark, then 2×(200 ms lit, 300 ms dark), 200 ms dark, then the
	// 2 Hz consent blink in its original phase (lit for the first 250 ms of
	// each 500 ms since it was set).
	want := []bool{
		false, false, false, false, // lead
		true, true, false, false, false, // first blink
		true, true, false, false, false, // second blink
		false, false, // tail
		true, true, false, false, // 1.6–1.9 s: consent blink again
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("amber over time (100 ms steps) = %v\nwant %v", got, want)
		}
	}
}
