package engine

import (
	"context"
	"sync"
	"testing"

	"github.com/questbox/questbox/gates"
)

// blockingWeb is a grounder whose fetches wait until the test releases them.
type blockingWeb struct {
	*web
	entered chan struct{}
	release chan struct{}
}

func (b *blockingWeb) Resolve(ctx context.Context, reqs []gates.Request) (gates.GroundFacts, error) {
	b.entered <- struct{}{}
	<-b.release
	return b.web.Resolve(ctx, reqs)
}

// A crash while a kept answer is being judged again must neither un-count
// the agent run that produced it (the replay is no agent run) nor lose the
// kept answer: after recovery it is replayed, not asked of the agent again.
func TestCrashDuringReplayKeepsAnswerAndCounters(t *testing.T) {
	w := &web{pages: map[string]string{"https://example.org/a": "The answer is forty-two, said the page."}}
	bw := &blockingWeb{web: w, entered: make(chan struct{}, 4), release: make(chan struct{})}
	var mu sync.Mutex
	block := false
	ground := func() gates.Grounder {
		mu.Lock()
		defer mu.Unlock()
		if block {
			return bw
		}
		return w
	}
	h := newHarness(t, Options{Catalog: groundCatalog, Ground: ground, Online: func() bool { return w.Online(nil) }})
	q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal; s.Mode = ModeSolo })
	res, _ := h.e.Scan(q.ID, []string{"what is the answer"})
	id := res.Added[0]
	if r, err := h.e.Submit(context.Background(), q.ID, id, []byte(citing("https://example.org/a", "forty-two"))); err != nil || r.Status != Deferred {
		t.Fatalf("offline submit: got %+v, %v, want deferred", r, err)
	}
	w.set(func(w *web) { w.online = true })
	mu.Lock()
	block = true
	mu.Unlock()
	rep, err := h.e.Tick(context.Background())
	if err != nil || len(rep.Dispatched) != 1 {
		t.Fatalf("tick: got %+v, %v, want the replay dispatched", rep, err)
	}
	<-bw.entered
	// kill -9: nothing after this point is recorded.
	if err := h.store.Close(); err != nil {
		t.Fatal(err)
	}
	close(bw.release)
	h.e.Wait()
	mu.Lock()
	block = false
	mu.Unlock()
	h.open()
	qq := h.questNow(q.ID)
	if qq.Counters.AgentRuns != 1 {
		t.Errorf("agent runs after recovery: got %d, want 1 (the replay was no agent run)", qq.Counters.AgentRuns)
	}
	h.tick()
	n := h.node(id)
	if n.Status != Explored || n.Tries != 0 {
		t.Fatalf("after recovery and a tick: got %s tries %d, want the kept answer replayed: explored, no try", n.Status, n.Tries)
	}
}

// Kept answers waiting for the network cost nothing while the box is
// offline: the tick leaves them queued and writes nothing.
func TestOfflineTickWithKeptAnswersWritesNothing(t *testing.T) {
	w := &web{pages: map[string]string{"https://example.org/a": "The answer is forty-two, said the page."}}
	h := newHarness(t, Options{Catalog: groundCatalog, Ground: func() gates.Grounder { return w }, Online: func() bool { return w.Online(nil) }})
	q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal; s.Mode = ModeSolo })
	res, err := h.e.Scan(q.ID, []string{"what is the answer", "what is the question"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range res.Added {
		if r, err := h.e.Submit(context.Background(), q.ID, id, []byte(citing("https://example.org/a", "forty-two"))); err != nil || r.Status != Deferred {
			t.Fatalf("offline submit: got %+v, %v, want deferred", r, err)
		}
	}
	before := h.store.Commits()
	for i := 0; i < 3; i++ {
		h.tick()
	}
	if got := h.store.Commits() - before; got != 0 {
		t.Errorf("3 offline ticks with 2 kept answers committed %d times, want 0", got)
	}
	w.set(func(w *web) { w.online = true })
	for i := 0; i < 2; i++ {
		h.tick()
	}
	for _, id := range res.Added {
		if n := h.node(id); n.Status != Explored {
			t.Errorf("node %s once online: got %s, want explored (its kept answer replayed)", id, n.Status)
		}
	}
}
