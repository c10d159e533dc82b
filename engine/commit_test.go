package engine

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/store"
)

// heldFailing answers once release is closed, with an answer that breaks
// the output contract: the gate runs, the node FAILs a try and goes back
// to pending.
func heldFailing(release <-chan struct{}) Provider {
	return funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		<-release
		return reply("no JSON in this answer for " + req.Node), nil
	})
}

// The whole cycle of a tick whose agents all answer at once costs a
// handful of commits, not one per result: the tick's commit and the
// group commits of the results.
func TestCycleOfManyResultsCostsFewCommits(t *testing.T) {
	const quests = 300
	release := make(chan struct{})
	p := heldFailing(release)
	h := newHarness(t, Options{Providers: map[string]Provider{"p": p}, MaxParallel: quests})
	ids := h.bulk(quests, 0, func(s *QuestSpec) { s.Provider = "p"; s.Mode = ModeSolo })
	before := h.store.Commits()
	rep, err := h.e.Tick(context.Background())
	if err != nil || len(rep.Dispatched) != quests {
		t.Fatalf("tick: dispatched %d, %v; want %d", len(rep.Dispatched), err, quests)
	}
	close(release)
	h.e.Wait()
	commits := h.store.Commits() - before
	// One for the tick; the results arrive within a few ms of each other
	// and are announced while they are judged. The bound leaves room for
	// a loaded machine, and is still far below one commit per result.
	if commits > quests/20 {
		t.Errorf("a cycle of %d results committed %d times, want far fewer than %d (at most %d)", quests, commits, quests, quests/20)
	}
	t.Logf("%d results: %d commits, the tick's included", quests, commits)
	for _, id := range ids {
		q := h.questNow(id)
		if q.Running != "" || q.Counts.Get(Pending) != 1 || q.Counters.AgentRuns != 1 {
			t.Fatalf("quest %s after the cycle: running %q, counts %v, runs %d; want its node back to pending after one FAIL", id, q.Running, q.Counts, q.Counters.AgentRuns)
		}
	}
}

// groupRig queues calls on a store whose leader waits (for as long as it
// takes) for an announced write: every call below lands in one batch.
type groupRig struct {
	t  *testing.T
	s  *Store
	tk *ticket
	wg sync.WaitGroup
	mu sync.Mutex
	// errs holds each call's error by name.
	errs map[string]error
}

func newGroupRig(t *testing.T) *groupRig {
	s := mustOpenStore(t, "")
	t.Cleanup(func() { s.Close() })
	s.h.Latency = time.Hour
	return &groupRig{t: t, s: s, tk: s.expect(), errs: map[string]error{}}
}

// queue starts a batch call named name and waits until it is queued.
func (r *groupRig) queue(name string, fn func(*store.Tx) error) {
	n, _, _ := r.s.h.Queue()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		err := r.s.batch(fn, nil)
		r.mu.Lock()
		r.errs[name] = err
		r.mu.Unlock()
	}()
	for {
		q, _, _ := r.s.h.Queue()
		queued := q > n
		if queued {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// last queues the announced write and waits for every call.
func (r *groupRig) last(name string, fn func(*store.Tx) error) {
	err := r.s.batch(fn, r.tk)
	r.wg.Wait()
	r.errs[name] = err
}

func put(key, value string) func(*store.Tx) error {
	return func(tx *store.Tx) error { return tx.Meta().Put([]byte(key), []byte(value)) }
}

func (r *groupRig) get(key string) string {
	var v string
	_ = r.s.view(func(tx *store.Tx) error { v = string(tx.Meta().Get([]byte(key))); return nil })
	return v
}

func TestGroupCommitSharesOneCommit(t *testing.T) {
	r := newGroupRig(t)
	before := r.s.Commits()
	for i := range 9 {
		r.queue(fmt.Sprint("w", i), put(fmt.Sprint("k", i), "v"))
	}
	r.last("w9", put("k9", "v"))
	if got := r.s.Commits() - before; got != 1 {
		t.Errorf("10 writes queued together committed %d times, want 1", got)
	}
	for i := range 10 {
		if err := r.errs[fmt.Sprint("w", i)]; err != nil {
			t.Errorf("write %d: %v", i, err)
		}
		if got := r.get(fmt.Sprint("k", i)); got != "v" {
			t.Errorf("k%d = %q after the commit, want v", i, got)
		}
	}
}

// A write that fails after writing part of its change does not leak that
// part into the batch: the batch is rolled back and run again without it,
// and its own caller gets its error from a run of its own.
func TestGroupCommitFailedWriteRunsAlone(t *testing.T) {
	r := newGroupRig(t)
	errBad := errors.New("bad write")
	var mu sync.Mutex
	runs := map[string]int{}
	counted := func(name string, fn func(*store.Tx) error) func(*store.Tx) error {
		return func(tx *store.Tx) error {
			mu.Lock()
			runs[name]++
			mu.Unlock()
			return fn(tx)
		}
	}
	before := r.s.Commits()
	r.queue("a", counted("a", put("a", "1")))
	r.queue("bad", counted("bad", func(tx *store.Tx) error {
		if err := tx.Meta().Put([]byte("half"), []byte("written")); err != nil {
			return err
		}
		return errBad
	}))
	r.last("b", counted("b", put("b", "2")))
	if !errors.Is(r.errs["bad"], errBad) {
		t.Errorf("failing write: got %v, want its own error", r.errs["bad"])
	}
	if r.errs["a"] != nil || r.errs["b"] != nil {
		t.Errorf("the other writes: %v, %v; want nil", r.errs["a"], r.errs["b"])
	}
	if r.get("a") != "1" || r.get("b") != "2" || r.get("half") != "" {
		t.Errorf("after the batch: a=%q b=%q half=%q, want 1, 2 and nothing of the failed write", r.get("a"), r.get("b"), r.get("half"))
	}
	// "a" ran before the failure, was rolled back and ran again; "bad"
	// ran in the batch and once alone.
	if runs["a"] != 2 || runs["bad"] != 2 || runs["b"] != 1 {
		t.Errorf("runs %v, want a:2 bad:2 b:1", runs)
	}
	if got := r.s.Commits() - before; got != 1 {
		t.Errorf("committed %d times, want 1 (the failed write commits nothing)", got)
	}
}

// A write that has nothing to write (errUnchanged) does not spoil the
// batch it is in, and a batch of such writes commits nothing.
func TestGroupCommitUnchangedWrites(t *testing.T) {
	r := newGroupRig(t)
	unchanged := func(*store.Tx) error { return errUnchanged }
	before := r.s.Commits()
	r.queue("u1", unchanged)
	r.queue("a", put("a", "1"))
	r.last("u2", unchanged)
	if !errors.Is(r.errs["u1"], errUnchanged) || !errors.Is(r.errs["u2"], errUnchanged) || r.errs["a"] != nil {
		t.Errorf("errors %v, want errUnchanged for u1 and u2, nil for a", r.errs)
	}
	if got := r.s.Commits() - before; got != 1 || r.get("a") != "1" {
		t.Errorf("committed %d times, a=%q; want 1 commit holding a", got, r.get("a"))
	}

	r = newGroupRig(t)
	before = r.s.Commits()
	r.queue("u1", unchanged)
	r.last("u2", unchanged)
	if got := r.s.Commits() - before; got != 0 {
		t.Errorf("a batch of writes with nothing to write committed %d times, want 0", got)
	}
}

// The engine's writes of one group commit write their events as one
// group record, in the order the writes ran, all with the time of the
// batch's first write; a write that failed in the batch leaves nothing of
// its own in it, and run alone it writes a record of its own.
func TestGroupCommitWritesOneEventRecord(t *testing.T) {
	h := newHarness(t, Options{})
	h.store.h.Latency = time.Hour
	r := &groupRig{t: t, s: h.store, tk: h.store.expect(), errs: map[string]error{}}
	errOnce := errors.New("failed in the batch")
	failed := false
	emits := func(name string, n int) func(*store.Tx) error {
		return (&engineWrite{e: h.e, fn: func(t *txn) error {
			for i := range n {
				if err := t.Emit(Event{Kind: KindNode, Node: fmt.Sprint(name, i)}); err != nil {
					return err
				}
			}
			switch {
			case name == "a":
				h.clock.Advance(time.Second) // the next writes' own clock moves on
			case name == "flaky" && !failed:
				failed = true
				return errOnce
			}
			return nil
		}}).run
	}
	records := func() int {
		n := 0
		_ = h.store.view(func(tx *store.Tx) error {
			return tx.Events().ForEach(func(_, _ []byte) error { n++; return nil })
		})
		return n
	}
	since, recs := h.e.LastSeq(), records()
	r.queue("a", emits("a", 3))
	r.queue("flaky", emits("flaky", 2))
	r.queue("b", emits("b", 1))
	r.last("c", emits("c", 4))
	for name, err := range r.errs {
		if err != nil {
			t.Errorf("write %s: %v, want nil", name, err)
		}
	}
	// The batch a, b, c is one record; flaky, run alone after its
	// failure, is another.
	if got := records() - recs; got != 2 {
		t.Errorf("the batch and the write run alone added %d event records, want 2", got)
	}
	evs, err := h.e.Events(since, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, ev := range evs {
		got = append(got, ev.Node)
		if ev.Seq != since+uint64(i)+1 {
			t.Errorf("event %s has seq %d, want %d", ev.Node, ev.Seq, since+uint64(i)+1)
		}
		if i > 0 && i < 8 && !ev.Time.Equal(evs[0].Time) {
			t.Errorf("event %s at %v, want the batch's time %v", ev.Node, ev.Time, evs[0].Time)
		}
	}
	want := "[a0 a1 a2 b0 c0 c1 c2 c3 flaky0 flaky1]"
	if fmt.Sprint(got) != want {
		t.Errorf("events %v, want %s", got, want)
	}
}

// A group commit's shared event group is written once it holds a page's
// worth, and the writes after it start another: no record of a batch's
// events outgrows a page by more than one write's events.
func TestGroupCommitEventRecordsStayWithinAPage(t *testing.T) {
	h := newHarness(t, Options{})
	h.store.h.Latency = time.Hour
	r := &groupRig{t: t, s: h.store, tk: h.store.expect(), errs: map[string]error{}}
	detail := strings.Repeat("x", 400)
	emits := (&engineWrite{e: h.e, fn: func(t *txn) error {
		return t.Emit(Event{Kind: KindNode, Detail: detail})
	}}).run
	since := h.e.LastSeq()
	const writes = 20
	for i := range writes - 1 {
		r.queue(fmt.Sprint("w", i), emits)
	}
	r.last("last", emits)
	var sizes []int
	_ = h.store.view(func(tx *store.Tx) error {
		c := tx.Events().Cursor()
		for k, v := c.Seek(u64(since + 1)); k != nil; k, v = c.Next() {
			sizes = append(sizes, len(v))
		}
		return nil
	})
	// 20 events of ~410 bytes: 8 KB in three records, not one.
	if len(sizes) < 3 {
		t.Errorf("the batch's events are %d records of %v bytes, want 3 or more", len(sizes), sizes)
	}
	for _, n := range sizes {
		if n > sharedGroupBytes+450 {
			t.Errorf("an event record of %d bytes, want at most %d", n, sharedGroupBytes+450)
		}
	}
	if evs, err := h.e.Events(since, 100); err != nil || len(evs) != writes {
		t.Errorf("read back %d events, %v; want %d", len(evs), err, writes)
	}
}

// A commit that fails (a full disk) fails every write in it with
// ErrStoreFailed, and leaves none of them behind.
func TestGroupCommitFailedCommitFailsEveryWrite(t *testing.T) {
	r := newGroupRig(t)
	r.s.h.WriteFault = func() error { return syscall.ENOSPC }
	r.queue("a", put("a", "1"))
	r.last("b", put("b", "2"))
	for _, name := range []string{"a", "b"} {
		if err := r.errs[name]; !errors.Is(err, ErrStoreFailed) || !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("write %s on a full disk: got %v, want ErrStoreFailed wrapping ENOSPC", name, err)
		}
	}
	r.s.h.WriteFault = nil
	if r.get("a") != "" || r.get("b") != "" {
		t.Errorf("after the failed commit: a=%q b=%q, want nothing", r.get("a"), r.get("b"))
	}
}

// A writer that writes one thing after the other is never held for a
// burst: each of its writes is alone, and commits at once. (It would take
// the group commit's gap a write otherwise: 100 writes, 10 s.)
func TestGroupCommitSequentialWriterIsNotHeld(t *testing.T) {
	s := mustOpenStore(t, "")
	t.Cleanup(func() { s.Close() })
	s.h.Latency = time.Hour
	for i := range 100 {
		if err := s.batch(put(fmt.Sprint("k", i), "v"), nil); err != nil {
			t.Fatal(err)
		}
	}
	// Nothing to measure but that it returned: with an hour's latency,
	// a write held for a burst would not have.
}

// Writes that keep arriving, from many writers at once, are committed in
// batches that close by the latency bound: a stream with no pause never
// holds its writers for good, and each commit holds many of them.
func TestGroupCommitStreamCommitsByLatency(t *testing.T) {
	s := mustOpenStore(t, "")
	t.Cleanup(func() { s.Close() })
	s.h.Latency = 20 * time.Millisecond
	stop := make(chan struct{})
	var acked, running sync.WaitGroup
	var mu sync.Mutex
	writes := 0
	running.Add(8)
	for w := range 8 {
		acked.Add(1)
		go func() {
			defer acked.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := s.batch(put(fmt.Sprint("w", w, "-", i), "v"), nil); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				writes++
				mu.Unlock()
				if i == 0 {
					running.Done()
				}
			}
		}()
	}
	// Once every writer has written, wait for a few commits while the
	// writes keep coming.
	running.Wait()
	mu.Lock()
	before, from := s.Commits(), writes
	mu.Unlock()
	for s.Commits()-before < 5 {
		runtime.Gosched()
	}
	close(stop)
	acked.Wait()
	commits := s.Commits() - before
	writes -= from
	if commits < 5 {
		t.Fatalf("%d commits, want at least 5", commits)
	}
	if uint64(writes) < 3*commits {
		t.Errorf("%d writes in %d commits: want batches of several writes each (three or more on average)", writes, commits)
	}
	t.Logf("%d writes from 8 writers in %d commits", writes, commits)
}

// crashChild is set in the subprocess of TestAcknowledgedSubmitsSurviveSIGKILL.
const crashChild = "QUESTBOX_ENGINE_CRASH_CHILD"

// Every submit acknowledged through the group commit survives a SIGKILL
// of the process at a random moment: the child submits from many
// goroutines at once and prints each acknowledgement after Submit
// returned; the parent kills it with SIGKILL mid-stream, reopens the
// store and finds every acknowledged verdict. The submits arrive as a
// burst, so the leader gathers them (engine/commit): the acknowledgements
// show how many commits they took, and the test checks that they
// shared them.
func TestAcknowledgedSubmitsSurviveSIGKILL(t *testing.T) {
	if dir := os.Getenv(crashChild); dir != "" {
		crashChildMain(t, dir)
		return
	}
	if testing.Short() {
		t.Skip("runs a subprocess")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestAcknowledgedSubmitsSurviveSIGKILL$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashChild+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := map[string]int{} // node -> tries acknowledged
	sc := bufio.NewScanner(out)
	n := 0
	var firstCommit, lastCommit uint64
	for sc.Scan() && n < 150 {
		f := strings.Fields(sc.Text())
		if len(f) != 4 || f[0] != "ack" {
			continue
		}
		tries, _ := strconv.Atoi(f[2])
		commits, _ := strconv.ParseUint(f[3], 10, 64)
		if n == 0 {
			firstCommit = commits
		}
		lastCommit = commits
		acked[f[1]] = max(acked[f[1]], tries)
		n++
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// What the child acknowledged after we stopped reading is not
	// counted: it may or may not have been printed before the kill.
	_ = cmd.Wait()
	if n < 150 {
		t.Fatalf("the child acknowledged %d submits before it stopped, want 150:\n%s", n, stderr.String())
	}
	s := mustOpenStore(t, dir)
	defer s.Close()
	e, err := New(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for id, tries := range acked {
		nd, err := e.Node(id)
		if err != nil {
			t.Fatal(err)
		}
		if nd.Tries < tries {
			t.Errorf("node %s has %d tries after SIGKILL, but %d were acknowledged", id, nd.Tries, tries)
		}
	}
	if _, err := e.Verify(); err != nil {
		t.Errorf("verify after SIGKILL: %v", err)
	}
	// Each ack carries the commits counted after its Submit returned:
	// 150 acks over the span of a handful of commits were batched.
	if span := lastCommit - firstCommit; span*3 > uint64(n) {
		t.Errorf("%d acknowledged submits took %d commits: want batches of three or more on average", n, span)
	}
	t.Logf("%d acknowledged submits on %d nodes, in %d commits, survived SIGKILL", n, len(acked), lastCommit-firstCommit)
}

// crashChildMain submits failing answers from many goroutines until it
// is killed, printing an acknowledgement after each Submit returned.
func crashChildMain(t *testing.T, dir string) {
	s, err := OpenStore(dir, StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const quests = 40
	var ws []*Work
	for i := range quests {
		spec := e.NewQuestSpec(fmt.Sprint("crash ", i), fmt.Sprint("crash direction ", i))
		spec.Provider, spec.Limits.MaxTries, spec.Limits.MaxStalled = ProviderExternal, 1<<20, 0
		spec.Limits.MaxAgentRuns = 1 << 20
		q, err := e.NewQuest(spec)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Scan(q.ID, []string{"survive a crash"}); err != nil {
			t.Fatal(err)
		}
		w, err := e.Next(q.ID)
		if err != nil || w == nil {
			t.Fatalf("next: %v, %v", w, err)
		}
		ws = append(ws, w)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				r, err := e.Submit(context.Background(), w.Quest, w.Node, []byte("no JSON here"))
				if err != nil {
					fmt.Fprintln(os.Stderr, "submit:", err)
					os.Exit(1)
				}
				mu.Lock()
				fmt.Fprintf(os.Stdout, "ack %s %d %d\n", w.Node, r.Tries, s.Commits())
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}
