package clock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/questbox/questbox/internal/clock"
	"github.com/questbox/questbox/internal/clock/clocktest"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func TestSleep(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tt := range []struct {
		name    string
		ctx     context.Context
		d       time.Duration
		advance bool // advance the clock by d once Sleep waits on it
		want    error
	}{
		{name: "elapsed", ctx: context.Background(), d: time.Second, advance: true},
		{name: "zero", ctx: context.Background(), d: 0},
		{name: "negative", ctx: context.Background(), d: -time.Second},
		{name: "zero, canceled", ctx: canceled, d: 0, want: context.Canceled},
		{name: "canceled", ctx: canceled, d: time.Second, want: context.Canceled},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := clocktest.NewClock(t0)
			done := make(chan error, 1)
			go func() { done <- clock.Sleep(tt.ctx, c, tt.d) }()
			if tt.advance {
				c.BlockUntil(1)
				c.Advance(tt.d)
			}
			if got := <-done; !errors.Is(got, tt.want) {
				t.Errorf("Sleep(%v) = %v, want %v", tt.d, got, tt.want)
			}
			if n := c.Timers(); n != 0 {
				t.Errorf("Timers() = %d after Sleep returned, want 0 (its timer stopped)", n)
			}
		})
	}
}

func TestSleepStopsItsTimerWhenCanceled(t *testing.T) {
	c := clocktest.NewClock(t0)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- clock.Sleep(ctx, c, time.Hour) }()
	c.BlockUntil(1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep = %v, want context.Canceled", err)
	}
	if n := c.Timers(); n != 0 {
		t.Errorf("Timers() = %d after a canceled Sleep, want 0", n)
	}
}

// Real's timers are package time's: Stop and Reset report whether the
// timer was armed, and a timer reset to 0 fires.
func TestRealTimer(t *testing.T) {
	var c clock.Real // the zero value is ready
	if c.Now().IsZero() {
		t.Error("Real.Now() is the zero time")
	}
	tm := c.NewTimer(time.Hour)
	if !tm.Stop() {
		t.Error("Stop of an armed timer = false, want true")
	}
	if tm.Stop() {
		t.Error("second Stop = true, want false")
	}
	if tm.Reset(0) {
		t.Error("Reset of a stopped timer = true, want false")
	}
	<-tm.C()
	if tm.Stop() {
		t.Error("Stop after the timer fired = true, want false")
	}
}
