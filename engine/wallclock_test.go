package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/store"
)

// daemon is Engine.Serve running on a harness's fake clock, ticking every
// minute.
type daemon struct {
	h      *harness
	cancel context.CancelFunc
	done   chan error
	ticks  chan tickResult
}

type tickResult struct {
	rep TickReport
	err error
}

// serve starts Serve and returns once it waits for its first tick, so the
// session starts at the clock's current time.
func (h *harness) serve() *daemon {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	d := &daemon{h: h, cancel: cancel, done: make(chan error, 1), ticks: make(chan tickResult)}
	go func() {
		d.done <- h.e.Serve(ctx, time.Minute, func(rep TickReport, err error) { d.ticks <- tickResult{rep, err} })
	}()
	h.clock.BlockUntil(1)
	h.t.Cleanup(d.stop)
	return d
}

// step advances the clock a minute to the next tick, waits for it and for
// the runs it started, and for Serve to wait for the tick after.
func (d *daemon) step() TickReport {
	d.h.t.Helper()
	d.h.clock.Advance(time.Minute)
	r := <-d.ticks
	if r.err != nil {
		d.h.t.Fatalf("tick: %v", r.err)
	}
	d.h.e.Wait()
	d.h.clock.BlockUntil(1)
	return r.rep
}

func (d *daemon) steps(n int) {
	d.h.t.Helper()
	for i := 0; i < n; i++ {
		d.step()
	}
}

// stop ends Serve (as SIGTERM does) and waits for it to return.
func (d *daemon) stop() {
	if d.cancel == nil {
		return
	}
	d.cancel()
	d.cancel = nil
	if err := <-d.done; err != nil {
		d.h.t.Errorf("serve: %v", err)
	}
	// Serve stopped the timer of the tick it was waiting for: the next
	// serve's BlockUntil waits for a timer of its own.
}

// stored is the quest as its record is on disk, without the time not
// saved yet: what a crash would leave.
func (h *harness) stored(id string) *Quest {
	h.t.Helper()
	var q *Quest
	err := h.store.view(func(tx *store.Tx) error {
		var err error
		q, _, err = getQuest(tx, id)
		return err
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return q
}

// busy answers every run with a new direction, so a solo quest always has
// a pending node and writes its record every tick.
var busy = funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
	return reply(answer("promising", "this looks promising for "+req.Node, "next after "+req.Node)), nil
})

func TestWallClockCountsOnlyServedTime(t *testing.T) {
	for _, tt := range []struct {
		name string
		spec func(*QuestSpec)
	}{
		{"idle quest", func(s *QuestSpec) { s.Provider = ProviderExternal }},
		{"busy quest", func(s *QuestSpec) { s.Provider, s.Mode = "busy", ModeSolo }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, Options{Providers: map[string]Provider{"busy": busy}})
			q := h.quest(tt.spec)

			d := h.serve()
			d.steps(10)
			if got := h.questNow(q.ID).Counters.WallUsed; got != 10*time.Minute {
				t.Errorf("while serving: got %s, want 10m", got)
			}
			d.stop()
			if got := h.stored(q.ID).Counters.WallUsed; got != 10*time.Minute {
				t.Errorf("stored when the daemon stopped: got %s, want 10m", got)
			}

			h.clock.Advance(5 * time.Hour) // the daemon is down
			h.restart()
			if got := h.questNow(q.ID).Counters.WallUsed; got != 10*time.Minute {
				t.Errorf("with no daemon after 5h: got %s, want 10m", got)
			}
			if _, err := h.e.Tick(context.Background()); err != nil { // `questbox tick` with no daemon
				t.Fatal(err)
			}
			h.e.Wait()

			d = h.serve()
			d.steps(10)
			d.stop()
			if got := h.stored(q.ID).Counters.WallUsed; got != 20*time.Minute {
				t.Errorf("after 10m, 5h down, 10m: got %s, want 20m", got)
			}
			if got := h.questNow(q.ID).Counters.WallUsed; got != 20*time.Minute {
				t.Errorf("reported: got %s, want 20m", got)
			}
		})
	}
}

func TestWallClockBudgetTerminatesAtTheTickItRunsOut(t *testing.T) {
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) {
		s.Provider = ProviderExternal
		s.Limits.WallClock = 30 * time.Minute
	})
	d := h.serve()
	d.steps(20)
	d.stop()
	h.clock.Advance(3 * time.Hour)
	h.restart()
	d = h.serve()
	for i := 1; i <= 10; i++ {
		rep := d.step()
		qq := h.questNow(q.ID)
		if i < 10 {
			if qq.Status != QuestActive || len(rep.Terminated) > 0 {
				t.Fatalf("after %dm: quest %s (%s), terminated %v; want active", 20+i, qq.Status, qq.Reason, rep.Terminated)
			}
			continue
		}
		if len(rep.Terminated) != 1 || rep.Terminated[0] != q.ID {
			t.Errorf("after 30m: terminated %v, want [%s]", rep.Terminated, q.ID)
		}
		if want := "wall_clock budget used (30m0s of 30m0s)"; qq.Status != QuestTerminated || qq.Reason != want {
			t.Errorf("after 30m: got %s %q, want terminated %q", qq.Status, qq.Reason, want)
		}
	}
	d.step()
	d.stop()
	if got := h.stored(q.ID).Counters.WallUsed; got != 30*time.Minute {
		t.Errorf("stored: got %s, want 30m (a terminated quest's clock stops)", got)
	}
}

func TestWallClockStopAndResume(t *testing.T) {
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal })
	d := h.serve()
	d.steps(10)
	stopped, err := h.e.StopQuest(q.ID, SourceCLI)
	if err != nil {
		t.Fatal(err)
	}
	if stopped.Counters.WallUsed != 10*time.Minute {
		t.Errorf("at stop: got %s, want 10m", stopped.Counters.WallUsed)
	}
	d.steps(30)
	if got := h.questNow(q.ID).Counters.WallUsed; got != 10*time.Minute {
		t.Errorf("stopped for 30m: got %s, want 10m", got)
	}
	if _, err := h.e.ResumeQuest(q.ID, SourceCLI); err != nil {
		t.Fatal(err)
	}
	d.steps(5)
	if got := h.questNow(q.ID).Counters.WallUsed; got != 15*time.Minute {
		t.Errorf("resumed for 5m: got %s, want 15m", got)
	}
	d.stop()

	// Stopped and resumed with no daemon: the clock runs again from the
	// next daemon's start.
	if _, err := h.e.StopQuest(q.ID, SourceCLI); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(time.Hour)
	if _, err := h.e.ResumeQuest(q.ID, SourceCLI); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(time.Hour)
	d = h.serve()
	d.steps(5)
	d.stop()
	if got := h.stored(q.ID).Counters.WallUsed; got != 20*time.Minute {
		t.Errorf("resumed with no daemon, then served 5m: got %s, want 20m", got)
	}
}

func TestWallClockQuestCreatedWhileServing(t *testing.T) {
	h := newHarness(t, Options{})
	d := h.serve()
	d.steps(5)
	q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal })
	d.steps(5)
	if got := h.questNow(q.ID).Counters.WallUsed; got != 5*time.Minute {
		t.Errorf("created 5m ago: got %s, want 5m", got)
	}
}

// An idle daemon writes its quests' wall time once an hour, in one commit
// for all of them; a crash loses at most that hour.
func TestWallClockSavedHourlyWhenIdle(t *testing.T) {
	h := newHarness(t, Options{})
	var ids []string
	for i := 0; i < 10; i++ {
		ids = append(ids, h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal; s.Name = fmt.Sprint("idle ", i) }).ID)
	}
	d := h.serve()
	before := h.store.Commits()
	d.steps(90)
	if got := h.store.Commits() - before; got != 1 {
		t.Errorf("90 idle ticks committed %d times, want 1 (the hourly save)", got)
	}
	for _, id := range ids {
		if got := h.stored(id).Counters.WallUsed; got != time.Hour {
			t.Errorf("quest %s stored after 90m: got %s, want 1h (the hourly save)", id, got)
		}
		if got := h.questNow(id).Counters.WallUsed; got != 90*time.Minute {
			t.Errorf("quest %s reported after 90m: got %s, want 1h30m", id, got)
		}
	}

	// A power cut now: the store as it is on disk, the daemon gone
	// without saving. The next daemon goes on from the hourly save.
	dir := t.TempDir()
	raw, err := os.ReadFile(filepath.Join(h.dir, StoreFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, StoreFile), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	copyDeviceKey(t, h.dir, dir)
	d.stop()
	h.clock.Advance(time.Hour)
	h2 := &harness{t: t, dir: dir, clock: h.clock, opt: h.opt}
	h2.open()
	t.Cleanup(h2.close)
	d2 := h2.serve()
	d2.steps(10)
	d2.stop()
	if got := h2.stored(ids[0]).Counters.WallUsed; got != 70*time.Minute {
		t.Errorf("after a crash at 1h30m and 10m more: got %s, want 1h10m (at most the last hour lost)", got)
	}
}

func TestServeRunsOnce(t *testing.T) {
	h := newHarness(t, Options{})
	h.serve()
	err := h.e.Serve(context.Background(), time.Minute, nil)
	if err == nil || !strings.Contains(err.Error(), "already serving") {
		t.Errorf("second Serve: got %v, want an error", err)
	}
}
