// Package clocktest provides a fake [clock.Clock] that tests advance
// explicitly instead of sleeping, and wait on until the code under test has
// armed its timers.
package clocktest

import (
	"sort"
	"sync"
	"time"

	"github.com/questbox/questbox/internal/clock"
)

// Clock is a fake clock.Clock. Time moves only when Advance is called; timers
// whose deadline is reached fire (in deadline order) during Advance, each sending
// its deadline on its buffered channel before Advance returns. Its timers follow
// the Go 1.23 Stop and Reset semantics of clock.Timer.
//
// Safe for concurrent use. mu guards now, timers and the condition.
type Clock struct {
	mu     sync.Mutex
	cond   *sync.Cond
	now    time.Time
	timers []*timer // armed timers, in no particular order
}

// NewClock returns a fake clock reading start.
func NewClock(start time.Time) *Clock {
	c := &Clock{now: start}
	c.cond = sync.NewCond(&c.mu)
	return c
}

var _ clock.Clock = (*Clock)(nil)

// Now implements clock.Clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// NewTimer implements clock.Clock. A timer with d <= 0 fires immediately and
// is never armed.
func (c *Clock) NewTimer(d time.Duration) clock.Timer {
	t := &timer{c: c, ch: make(chan time.Time, 1)}
	t.Reset(d)
	return t
}

// Advance moves the clock forward by d, firing every timer whose deadline is
// reached.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	target := c.now.Add(d)
	for {
		sort.Slice(c.timers, func(i, j int) bool { return c.timers[i].at.Before(c.timers[j].at) })
		if len(c.timers) == 0 || c.timers[0].at.After(target) {
			break
		}
		t := c.timers[0]
		c.timers = c.timers[1:]
		c.now = t.at
		t.fire()
	}
	c.now = target
	c.cond.Broadcast()
}

// Timers returns how many timers are armed (created or reset, not yet fired or
// stopped).
func (c *Clock) Timers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// BlockUntil blocks until at least n timers are armed: a test calls it to know
// that the code under test is now waiting on the clock, before advancing it.
// Code that stops its timers when it stops waiting (as clock.Sleep does) keeps
// the count exact.
func (c *Clock) BlockUntil(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.timers) < n {
		c.cond.Wait()
	}
}

// timer's fields are guarded by c.mu.
type timer struct {
	c  *Clock
	at time.Time
	ch chan time.Time
}

func (t *timer) C() <-chan time.Time { return t.ch }

// fire sends the deadline without blocking (the channel has room for one value,
// and Stop/Reset drain it). Called with c.mu held.
func (t *timer) fire() {
	select {
	case t.ch <- t.at:
	default:
	}
}

func (t *timer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	return t.stopLocked()
}

func (t *timer) stopLocked() bool {
	// Drain, so no stale value is received after Stop (Go 1.23 semantics).
	select {
	case <-t.ch:
	default:
	}
	for i, o := range t.c.timers {
		if o == t {
			t.c.timers = append(t.c.timers[:i], t.c.timers[i+1:]...)
			return true
		}
	}
	return false
}

func (t *timer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	active := t.stopLocked()
	t.at = t.c.now.Add(d)
	if d <= 0 {
		t.fire()
		return active
	}
	t.c.timers = append(t.c.timers, t)
	t.c.cond.Broadcast()
	return active
}
