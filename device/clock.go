package device

import (
	"context"
	"time"
)

// Clock is the package's only source of time, so tests can advance a fake one
// (devicetest.Clock) instead of sleeping. Implementations are safe for
// concurrent use.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// NewTimer returns a timer that sends the time on C once d has elapsed.
	NewTimer(d time.Duration) Timer
}

// Timer is a single-shot timer like [time.Timer]: Stop and Reset follow Go 1.23+
// semantics (no stale value is received after Stop or Reset returns).
type Timer interface {
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it was active.
	Stop() bool
	// Reset makes the timer fire d from now; it reports whether it was active.
	Reset(d time.Duration) bool
}

// RealClock is the wall clock. Its zero value is ready to use.
type RealClock struct{}

// Now implements Clock.
func (RealClock) Now() time.Time { return time.Now() }

// NewTimer implements Clock.
func (RealClock) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time        { return r.t.C }
func (r realTimer) Stop() bool                 { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) bool { return r.t.Reset(d) }

// sleep waits for d on clk or until ctx is done.
func sleep(ctx context.Context, clk Clock, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C():
		return nil
	}
}

// lazyTimer is a timer for loops that arm it later: it creates the Clock's
// timer on the first Reset, so an idle loop never arms one. (Creating a timer
// and stopping it at once would arm it for an instant, which a fake clock
// waiting for armed timers could take for the timer it awaits.)
type lazyTimer struct {
	clk Clock
	t   Timer
}

// C returns the timer's channel, or nil (blocks forever) before the first Reset.
func (l *lazyTimer) C() <-chan time.Time {
	if l.t == nil {
		return nil
	}
	return l.t.C()
}

func (l *lazyTimer) Stop() {
	if l.t != nil {
		l.t.Stop()
	}
}

func (l *lazyTimer) Reset(d time.Duration) {
	if l.t == nil {
		l.t = l.clk.NewTimer(d)
		return
	}
	l.t.Reset(d)
}
