package engine

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// Two ticks may overlap: the daemon's own and `questbox tick` through the
// control socket. Together they must not start more than MaxParallel runs.
func TestOverlappingTicksRespectMaxParallel(t *testing.T) {
	g := newGate()
	entered, resume := make(chan struct{}), make(chan struct{})
	var once sync.Once
	online := func() bool {
		first := false
		once.Do(func() { first = true })
		if first {
			close(entered)
			<-resume
		}
		return true
	}
	h := newHarness(t, Options{Providers: map[string]Provider{"g": g}, MaxParallel: 1, Online: online})
	for i := 0; i < 2; i++ {
		h.quest(func(s *QuestSpec) { s.Provider = "g"; s.Mode = ModeSolo; s.Name = fmt.Sprint("q", i) })
	}
	type result struct {
		rep TickReport
		err error
	}
	slow := make(chan result, 1)
	go func() {
		rep, err := h.e.Tick(context.Background())
		slow <- result{rep, err}
	}()
	<-entered
	rep, err := h.e.Tick(context.Background())
	if err != nil || len(rep.Dispatched) != 1 {
		t.Fatalf("second tick: got %+v, %v, want one dispatch", rep, err)
	}
	running := <-g.started
	close(resume)
	r := <-slow
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got := h.e.InFlight(); got != 1 || len(r.rep.Dispatched) != 0 {
		t.Errorf("overlapping tick dispatched %v; %d runs in flight, want at most 1 (max_parallel)", r.rep.Dispatched, got)
	}
	g.ch(running) <- reply(answer("dead", "this was a dead end, sadly"))
	for _, id := range r.rep.Dispatched {
		<-g.started
		g.ch(id) <- reply(answer("dead", "this was a dead end, sadly"))
	}
	h.e.Wait()
}
