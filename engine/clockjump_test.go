package engine

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/internal/clock"
	"github.com/questbox/questbox/internal/clock/clocktest"
)

// jumpClock is a clock whose wall reading can be stepped, as NTP steps a
// Pi's clock after boot, while its timers keep their durations (the kernel
// runs timers on the monotonic clock). Its readings carry no monotonic
// part (a fake cannot make one), so the engine sees the step in every
// reading: harsher than production, where Go's monotonic reading hides a
// step from time.Time.Sub within one process.
type jumpClock struct {
	fake *clocktest.Clock

	mu     sync.Mutex // guards offset
	offset time.Duration
}

func (c *jumpClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fake.Now().Add(c.offset)
}

func (c *jumpClock) NewTimer(d time.Duration) clock.Timer { return c.fake.NewTimer(d) }

func (c *jumpClock) jump(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

// TestTicksSurviveClockJumps steps the wall clock forward and backward,
// by hours and by less than a tick, under a serving engine: every tick
// period of timer time still brings exactly one tick (no burst of
// catch-up ticks after a step forward, no stall after a step back), no
// tick fails, and a quest's wall_clock count never goes down nor below
// zero as stored, and the live count never drops below the stored one. (The
// live count may fall back to the stored one after a step back: the time
// since the last save is counted from a mark that now lies in the future.
// Production readings carry a monotonic part and never step within a
// session; the session clock of engine/budget/wallclock.go is built
// on it.)
func TestTicksSurviveClockJumps(t *testing.T) {
	jc := &jumpClock{fake: clocktest.NewClock(time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC))}
	st := mustOpenStore(t, "")
	e, err := New(st, Options{Clock: jc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		e.Shutdown(0)
		st.Close()
	})
	spec := e.NewQuestSpec("jumps", "survive the clock")
	spec.Provider = ProviderExternal
	spec.Limits.WallClock = 1000 * time.Hour
	q, err := e.NewQuest(spec)
	if err != nil {
		t.Fatal(err)
	}

	ticks := make(chan error, 100)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Serve(ctx, time.Minute, func(_ TickReport, err error) { ticks <- err }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	jc.fake.BlockUntil(1)

	var used time.Duration
	for _, step := range []time.Duration{
		7*time.Hour + 13*time.Minute + 20*time.Second, // NTP after a boot with a stale clock
		-3*time.Hour - 40*time.Second,                 // a bad NTP server, corrected back
		30 * time.Second,                              // less than a tick
		-59 * time.Second,
		-30 * 24 * time.Hour, // a clock reset to a month ago
		0,
	} {
		jc.jump(step)
		for i := range 5 {
			jc.fake.Advance(time.Minute)
			if err := <-ticks; err != nil {
				t.Fatalf("after a step of %v, minute %d: tick failed: %v", step, i+1, err)
			}
			jc.fake.BlockUntil(1) // Serve waits for the next tick: one timer, no busy loop
			select {
			case <-ticks:
				t.Fatalf("after a step of %v, minute %d: two ticks in one minute", step, i+1)
			default:
			}
			got, err := e.Quest(q.ID) // the live count
			if err != nil {
				t.Fatal(err)
			}
			var stored *Quest
			if err := st.view(func(tx *store.Tx) error {
				var err error
				stored, _, err = getQuest(tx, q.ID)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if w := stored.Counters.WallUsed; w < used || w < 0 {
				t.Fatalf("after a step of %v, minute %d: the stored wall_clock count went from %v to %v", step, i+1, used, w)
			}
			used = stored.Counters.WallUsed
			if live := got.Counters.WallUsed; live < used {
				t.Fatalf("after a step of %v, minute %d: live count %v below the stored %v", step, i+1, live, used)
			}
			if got.Status != QuestActive {
				t.Fatalf("after a step of %v: quest %s (%s)", step, got.Status, got.Reason)
			}
		}
	}
	t.Logf("30 minutes of timer time, 30 ticks; wall_clock used %v (readings without a monotonic part show the steps)", used)
}
