package engine

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/questbox/questbox/engine/store"
)

// A finished run hands its result to the group commit as data: while the
// results wait for their commit, their runs' goroutines are gone (they
// used to wait there, one goroutine and its stack per result, hundreds at
// a busy cycle's peak). The results still commit together, and Wait
// returns only once they are recorded.
func TestResultsWaitForTheirCommitWithoutGoroutines(t *testing.T) {
	const quests = 200
	release := make(chan struct{})
	p := heldFailing(release)
	h := newHarness(t, Options{Providers: map[string]Provider{"p": p}, MaxParallel: quests})
	ids := h.bulk(quests, 0, func(s *QuestSpec) { s.Provider = "p"; s.Mode = ModeSolo })
	// The leader gathers for as long as this announced write is out:
	// every result queues, none commits, until it is withdrawn.
	h.store.h.Latency = time.Hour
	held := h.store.expect()
	rep, err := h.e.Tick(context.Background())
	if err != nil || len(rep.Dispatched) != quests {
		t.Fatalf("tick: dispatched %d, %v; want %d", len(rep.Dispatched), err, quests)
	}
	before := h.store.Commits()
	base := runtime.NumGoroutine()
	close(release)
	for queued := 0; queued < quests; {
		time.Sleep(time.Millisecond) // polling the queue, not timing it
		queued, _, _ = h.store.h.Queue()
	}
	// base counted the runs started and waiting for release (a few:
	// the start slots bound them) and whatever the harness runs. A design
	// that keeps a goroutine per waiting result has base + quests.
	if n := runtime.NumGoroutine(); n > base+quests/10 {
		t.Errorf("%d results wait for their commit in %d goroutines (%d before the runs answered), want the runs' goroutines gone", quests, n, base)
	}
	for _, id := range ids[:3] {
		if q := h.questNow(id); q.Running == "" || q.Counters.AgentRuns != 1 {
			t.Fatalf("quest %s before the commit: running %q, runs %d; want its run still running in the store", id, q.Running, q.Counters.AgentRuns)
		}
	}
	held.Settle()
	h.e.Wait()
	if got := h.store.Commits() - before; got != 1 {
		t.Errorf("%d results queued together committed %d times, want 1", quests, got)
	}
	for _, id := range ids {
		q := h.questNow(id)
		if q.Running != "" || q.Counts.Get(Pending) != 1 || q.Counters.AgentRuns != 1 {
			t.Fatalf("quest %s after Wait: running %q, counts %v, runs %d; want its node back to pending after one FAIL", id, q.Running, q.Counts, q.Counters.AgentRuns)
		}
	}
}

// asyncCalls collects what batchAsync's then is called with, and whether
// the write was already committed (readable) when it was.
type asyncCalls struct {
	s  *Store
	mu sync.Mutex
	// errs and seen by name; seen: the key read back in then.
	errs map[string]error
	seen map[string]bool
	wg   sync.WaitGroup
}

func newAsyncCalls(s *Store) *asyncCalls {
	return &asyncCalls{s: s, errs: map[string]error{}, seen: map[string]bool{}}
}

// put queues a write of key as data.
func (a *asyncCalls) put(name, key string, fn func(*store.Tx) error, tk *ticket) {
	a.wg.Add(1)
	a.s.batchAsync(fn, tk, func(err error) {
		defer a.wg.Done()
		var v []byte
		_ = a.s.view(func(tx *store.Tx) error { v = tx.Meta().Get([]byte(key)); return nil })
		a.mu.Lock()
		a.errs[name], a.seen[name] = err, v != nil
		a.mu.Unlock()
	})
}

// Writes queued as data share the batch of the callers that wait, and
// each learns its outcome only once its commit is decided: a committed
// write is readable by then; a write whose function fails gets its own
// error, and the others commit without it.
func TestGroupCommitQueuedAsData(t *testing.T) {
	r := newGroupRig(t)
	a := newAsyncCalls(r.s)
	// The engine wakes its subscribers here, once a batch: after every
	// write of the batch was told its outcome.
	told := make(chan int, 8) // by batch: how many had been told
	r.s.afterEachCommit(func() {
		a.mu.Lock()
		told <- len(a.errs)
		a.mu.Unlock()
	})
	before := r.s.Commits()
	for _, k := range []string{"a0", "a1", "a2"} {
		a.put(k, k, put(k, "v"), nil)
		r.queue("w"+k, put("w"+k, "v"))
	}
	boom := errors.New("boom")
	a.put("bad", "bad", func(tx *store.Tx) error {
		if err := put("bad", "v")(tx); err != nil {
			return err
		}
		return boom
	}, nil)
	r.last("last", put("last", "v"))
	a.wg.Wait()
	if got := r.s.Commits() - before; got != 1 {
		t.Errorf("7 writes queued together committed %d times, want 1 (the failed one alone commits nothing)", got)
	}
	for _, k := range []string{"a0", "a1", "a2"} {
		if a.errs[k] != nil || !a.seen[k] {
			t.Errorf("write %s queued as data: then(%v), readable %v; want nil, true", k, a.errs[k], a.seen[k])
		}
		if err := r.errs["w"+k]; err != nil || r.get("w"+k) != "v" {
			t.Errorf("waiting write w%s: %v, value %q; want nil, v", k, err, r.get("w"+k))
		}
	}
	if !errors.Is(a.errs["bad"], boom) || a.seen["bad"] {
		t.Errorf("failing write queued as data: then(%v), readable %v; want boom, false", a.errs["bad"], a.seen["bad"])
	}
	if n := <-told; n != 4 || len(told) != 0 {
		t.Errorf("afterEachCommit ran after %d of 4 writes queued as data were told, and %d times more; want once, after all 4", n, len(told))
	}
}

// A write queued as data with no leader gathering starts one, and one
// queued while a waiting caller commits is committed after it, by a
// leader of its own: the caller returns with its own commit and does not
// lead the queue after it.
func TestGroupCommitQueuedAsDataIsLed(t *testing.T) {
	s := mustOpenStore(t, "")
	t.Cleanup(func() { s.Close() })
	a := newAsyncCalls(s)
	a.put("alone", "alone", put("alone", "v"), nil)
	a.wg.Wait()
	if a.errs["alone"] != nil || !a.seen["alone"] {
		t.Fatalf("a lone write queued as data: then(%v), readable %v; want nil, true", a.errs["alone"], a.seen["alone"])
	}
	var once sync.Once
	s.beforeEachCommit(func() {
		once.Do(func() { a.put("during", "during", put("during", "v"), nil) })
	})
	before := s.Commits()
	if err := s.batch(put("first", "v"), nil); err != nil {
		t.Fatal(err)
	}
	a.wg.Wait()
	if a.errs["during"] != nil || !a.seen["during"] {
		t.Errorf("a write queued as data during a commit: then(%v), readable %v; want nil, true", a.errs["during"], a.seen["during"])
	}
	if got := s.Commits() - before; got != 2 {
		t.Errorf("a write and one queued during its commit committed %d times, want 2", got)
	}
}

// A read-only store refuses a write queued as data through then, at once.
func TestGroupCommitQueuedAsDataReadOnly(t *testing.T) {
	dir := t.TempDir()
	s := mustOpenStore(t, dir)
	s.Close()
	ro, err := OpenStore(dir, StoreOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ro.Close() })
	var got error
	ro.batchAsync(put("k", "v"), ro.expect(), func(err error) { got = err })
	if !errors.Is(got, ErrReadOnly) {
		t.Errorf("a write queued on a read-only store: then(%v), want ErrReadOnly", got)
	}
	if _, _, coming := ro.h.Queue(); coming != 0 {
		t.Errorf("the refused write's announcement is still counted: coming %d, want 0", coming)
	}
}

// Results queued as data may gather past a caller's latency bound, but a
// caller that joins them brings its bound back: with an hour's data
// latency and an announced write still out (the leader would wait for it
// that long), a submit still commits within its own latency, and the
// results queued before it commit with it, told before it returns.
func TestGroupCommitCallerBoundsQueuedData(t *testing.T) {
	s := mustOpenStore(t, "")
	t.Cleanup(func() { s.Close() })
	s.h.Latency = 20 * time.Millisecond
	s.h.DataLatency = time.Hour
	a := newAsyncCalls(s)
	held := s.expect() // the leader waits for it, up to the latency that applies
	t.Cleanup(held.Settle)
	before := s.Commits()
	a.put("r0", "r0", put("r0", "v"), nil)
	a.put("r1", "r1", put("r1", "v"), nil)
	// Returns only once its batch closed by its own latency: with the
	// data's hour bounding it, it would not (the test's timeout).
	if err := s.batch(put("submit", "v"), nil); err != nil {
		t.Fatal(err)
	}
	a.mu.Lock()
	for _, k := range []string{"r0", "r1"} {
		if a.errs[k] != nil || !a.seen[k] {
			t.Errorf("result %s queued before the submit: then(%v), readable %v when the submit returned; want nil, true", k, a.errs[k], a.seen[k])
		}
	}
	a.mu.Unlock()
	if got := s.Commits() - before; got != 1 {
		t.Errorf("two results and a submit committed %d times, want 1", got)
	}
	_, callers, _ := s.h.Queue()
	if callers != 0 {
		t.Errorf("no caller waits after the commit, but %d are counted", callers)
	}
}
