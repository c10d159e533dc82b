package clocktest_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/questbox/questbox/internal/clock"
	"github.com/questbox/questbox/internal/clock/clocktest"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func TestClockFiresTimersInOrder(t *testing.T) {
	c := clocktest.NewClock(t0)
	a := c.NewTimer(2 * time.Second)
	b := c.NewTimer(time.Second)
	if n := c.Timers(); n != 2 {
		t.Fatalf("Timers() = %d, want 2", n)
	}
	c.Advance(1500 * time.Millisecond)
	select {
	case got := <-b.C():
		if !got.Equal(t0.Add(time.Second)) {
			t.Errorf("b fired with %v, want its deadline", got)
		}
	default:
		t.Fatal("b did not fire")
	}
	select {
	case <-a.C():
		t.Fatal("a fired early")
	default:
	}
	if got := c.Now(); !got.Equal(t0.Add(1500 * time.Millisecond)) {
		t.Errorf("Now() = %v, want t0+1.5s", got)
	}
	c.Advance(time.Second)
	<-a.C()
	if n := c.Timers(); n != 0 {
		t.Errorf("Timers() = %d after firing, want 0", n)
	}
}

func TestClockStopAndReset(t *testing.T) {
	c := clocktest.NewClock(t0)
	tm := c.NewTimer(time.Second)
	if !tm.Stop() {
		t.Error("Stop of an armed timer = false, want true")
	}
	if tm.Stop() {
		t.Error("second Stop = true, want false")
	}
	c.Advance(2 * time.Second)
	select {
	case <-tm.C():
		t.Fatal("stopped timer fired")
	default:
	}
	// Fired but not received, then Reset: no stale value (Go 1.23 semantics).
	tm.Reset(time.Second)
	c.Advance(time.Second)
	tm.Reset(time.Second)
	select {
	case <-tm.C():
		t.Fatal("stale value after Reset")
	default:
	}
	c.Advance(time.Second)
	<-tm.C()
}

func TestClockBlockUntil(t *testing.T) {
	c := clocktest.NewClock(t0)
	done := make(chan struct{})
	go func() {
		c.BlockUntil(1)
		close(done)
	}()
	c.NewTimer(time.Second)
	<-done
}

// Many goroutines sleeping on one clock while a test advances it: each
// wakes once its deadline passes, and the clock is race-free.
func TestClockConcurrentSleepers(t *testing.T) {
	c := clocktest.NewClock(t0)
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- clock.Sleep(context.Background(), c, time.Duration(i+1)*time.Second)
		}()
	}
	c.BlockUntil(n)
	for range n {
		_ = c.Now()
		c.Advance(time.Second)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Sleep = %v, want nil", err)
		}
	}
	if got := c.Now(); !got.Equal(t0.Add(n * time.Second)) {
		t.Errorf("Now() = %v, want t0+%ds", got, n)
	}
	if k := c.Timers(); k != 0 {
		t.Errorf("Timers() = %d after every sleeper woke, want 0", k)
	}
}
