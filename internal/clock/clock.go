// Package clock is the program's one source of time. The engine's
// scheduler, the LED patterns, the button timing and the box's deadlines
// take a [Clock] instead of calling package time, so production passes
// [Real] and tests advance a fake one (package clocktest) instead of
// sleeping.
//
// The package imports nothing of questbox: every layer may use it except
// gates, which has no clock at all.
package clock

import (
	"context"
	"time"
)

// Clock tells the time and makes timers. Implementations are safe for
// concurrent use; neither method blocks.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// NewTimer returns an armed timer that sends the time on its channel
	// once d has elapsed; d <= 0 fires at once.
	NewTimer(d time.Duration) Timer
}

// Timer is a single-shot timer with the semantics of [time.Timer] from
// Go 1.23 on: once Stop or Reset returns, no value from before the call is
// received on C. A Timer is safe for concurrent use, but like a
// time.Timer it is meant to be owned by one goroutine, the one that
// receives from C.
type Timer interface {
	// C returns the channel on which the timer sends its time. It is the
	// same channel for the life of the timer.
	C() <-chan time.Time
	// Stop prevents the timer from firing. It reports whether the timer
	// was armed (false: it had fired or been stopped already).
	Stop() bool
	// Reset arms the timer to fire d from now, whether or not it was armed.
	// It reports whether the timer was armed.
	Reset(d time.Duration) bool
}

// Real is the wall clock, package time. Its zero value is ready to use.
type Real struct{}

var _ Clock = Real{}

// Now implements Clock.
func (Real) Now() time.Time { return time.Now() }

// NewTimer implements Clock with a [time.Timer].
func (Real) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time        { return r.t.C }
func (r realTimer) Stop() bool                 { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) bool { return r.t.Reset(d) }

// Sleep waits until d has elapsed on c or ctx is done, whichever comes
// first, and returns ctx.Err() in the second case (nil otherwise). With
// d <= 0 it returns ctx.Err() at once, without a timer. It stops its timer
// before it returns, so a fake clock never counts a sleep that is over.
func Sleep(ctx context.Context, c Clock, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C():
		return nil
	}
}
