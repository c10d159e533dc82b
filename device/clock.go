package device

import (
	"time"

	"github.com/questbox/questbox/internal/clock"
)

// lazyTimer is a timer for loops that arm it later: it creates the Clock's
// timer on the first Reset, so an idle loop never arms one. (Creating a timer
// and stopping it at once would arm it for an instant, which a fake clock
// waiting for armed timers could take for the timer it awaits.)
type lazyTimer struct {
	clk clock.Clock
	t   clock.Timer
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
