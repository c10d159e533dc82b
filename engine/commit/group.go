package commit

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/questbox/questbox/engine/store"
)

// Group commit (docs/design.md, "The store and its durability": one tick
// costs O(1) fsyncs end to end).
//
// Writes that arrive close together — run results, submits, consents,
// device events, outbox acknowledgements — share one bbolt transaction and
// so one commit (two fdatasyncs) instead of one each. Each caller still
// returns only after the commit that holds its write succeeded: what is
// acknowledged is durable.
//
// The first writer to arrive leads: it gathers the writes queued behind
// it, commits them, and hands the lead to the first write queued during
// that commit. How long a leader gathers adapts to how writes arrive
// (gather):
//
//   - a lone write (nothing announced, no other write queued with it)
//     commits at once: a consent press, a single result or a writer
//     that writes one thing after the other waits for no timer;
//   - while writes arrive in a burst — more than one queued (or one just
//     after a batch of several), the latest less than groupGap ago, as the
//     results of a busy tick come — and
//     the engine still has runs out (Store.ExpectFrom), the leader keeps
//     gathering until groupGap passes without a new one; once no run is
//     out, nothing more of the burst can come, and it commits;
//   - while writes are announced (Store.Expect: an agent answered and its
//     answer is being judged), the leader waits for them;
//   - but never past groupLatency after the oldest queued caller (a
//     submit, a consent: a writer waiting on its commit) arrived, and
//     never past groupMax writes in one transaction.
//
// So a caller waits at most groupLatency for its batch to close, then for
// the commit in progress ahead of it (if any) and its own: that is the
// latency bound of every submitter (README, "The store"). Past groupMax
// queued writes, the rest go in the batches after. Nothing is
// acknowledged before the commit that holds it returned.
//
// Writes queued as data (BatchAsync: a run's result, whose goroutine has
// ended) have no one waiting on them: while only such writes are queued,
// the leader gathers with the longer groupDataGap, so that a busy tick's
// results, which arrive over seconds with pauses longer than groupGap
// between them under load, take one commit per second of the burst
// rather than one per pause. Their bound is groupDataLatency, the
// callers' own: someone does wait on a result, only not in a call. The
// faces (MQTT, the dashboard) see its events once it commits, and the
// follow-up work it enables (a Team's next stage, a council's merge) is
// dispatched then (engine/chain.go); a bound of 4 s made a result reach them up
// to 4 s after its run ended, and each stage of a Team wait as long again
// on a busy box (bench/RESULTS.md, "Follow-up dispatch"). groupMax bounds
// the results held in memory meanwhile.
//
// The results of a busy tick arrive spread over the time their agents
// take (a thousand processes started on two cores take a second or
// more); committing each time the previous commit ends, as a group
// commit without a timer does, made 10 to 50 commits of such a cycle;
// gathering a burst up to groupLatency
// makes about one per groupLatency of the burst.
//
// Semantics of a batch, as bbolt's DB.Batch: the functions run one after
// the other in one transaction, each seeing the writes of those before
// it (the engine's writes also share one event group record and its
// time: the Events the store was opened with). A function that returns an error may have
// written part of its change, so the whole transaction is rolled back, the
// others run again without it (a function may therefore run more than
// once, and must only change state it resets at its start), and the
// failed one runs alone, in a transaction of its own, whose error is its
// caller's. A function that
// returns ErrUnchanged wrote nothing (that is its contract) and does not
// disturb the batch; a batch of such functions only is rolled back, not
// committed. A commit that fails (a full disk, an I/O error) fails every
// write in it with ErrStoreFailed; each caller decides whether to retry.

// The group commit's knobs. They are real time, as bbolt's MaxBatchDelay:
// commit-latency knobs, not a schedule (tests on a fake clock never
// advance them).
const (
	// groupLatency bounds how long a write waits for its batch to close.
	// A busy tick's results arrive over seconds on a loaded Pi; one
	// commit a second of such a burst keeps its syncs to a handful,
	// and a second is little next to a tick of a minute.
	groupLatency = time.Second
	// groupGap is the longest pause between two writes of a burst.
	groupGap = 100 * time.Millisecond
	// groupDataLatency and groupDataGap replace groupLatency and groupGap
	// while only writes queued as data wait (no caller on its commit): a
	// burst of results is gathered by the second.
	groupDataLatency = groupLatency
	groupDataGap     = time.Second
	// groupMax bounds the writes in one transaction, and so the memory of
	// the results queued and of the transaction that holds them: a busy
	// tick's thousand results take four commits or more.
	groupMax = 250
)

// groupCall is one write waiting for a group commit: either a caller
// waiting on wake (Store.Batch) or, with then set, data queued without a
// goroutine (Store.BatchAsync).
type groupCall struct {
	fn      func(*store.Tx) error
	arrived time.Time
	wake    chan struct{} // done or lead: sent once; nil with then
	// then, when set, is called by the leader with the write's error
	// once its commit is decided; it must not block or write.
	then func(error)
	// Set by the leader before wake.
	done      bool
	err       error
	unchanged bool // fn returned ErrUnchanged in the committed batch
}

// group is the store's group committer.
type group struct {
	mu      sync.Mutex // guards queue, leading, coming, callers, lastBurst, runsOut, beforeCommit
	queue   []*groupCall
	leading bool // a leader is gathering or committing
	coming  int  // writes announced by expect and not yet queued
	callers int  // calls in queue waiting on wake (not queued as data)
	kick    chan struct{}
	// lastBurst is when the last batch of more than one write committed:
	// a write alone in the queue less than the gap after it is part of
	// that burst (its writers writing again), not a lone write.
	lastBurst time.Time
	// runsOut reports whether more writes may come from work in flight
	// (Store.ExpectFrom); nil: unknown, as if they may. Called without mu.
	runsOut func() bool
	// beforeCommit, when set, runs in the leader before each batch's
	// transaction (Store.BeforeEachCommit). Called without mu.
	beforeCommit func()
	// afterCommit, when set, runs in the leader after each batch's
	// callers were told (Store.AfterEachCommit). Called without mu.
	afterCommit func()
}

// BeforeEachCommit makes fn run before each group commit's transaction,
// once per batch: the engine makes the run logs closed so far durable
// there (runlog.Dir.Sync), so that one sync serves every result of the
// batch, each of whose logs closed before its write was queued.
func (s *Store) BeforeEachCommit(fn func()) {
	s.group.mu.Lock()
	s.group.beforeCommit = fn
	s.group.mu.Unlock()
}

// AfterEachCommit makes fn run after each group commit's batch, once its
// writes' outcomes were handed out (then, wake): the engine wakes its
// event subscribers there once for all the writes queued as data in the
// batch, instead of once per write (the engine's Engine.batchAsync).
func (s *Store) AfterEachCommit(fn func()) {
	s.group.mu.Lock()
	s.group.afterCommit = fn
	s.group.mu.Unlock()
}

// ExpectFrom tells the group commit where more writes of a burst may come
// from: runsOut reports whether any may (the engine's runs in flight).
func (s *Store) ExpectFrom(runsOut func() bool) {
	s.group.mu.Lock()
	s.group.runsOut = runsOut
	s.group.mu.Unlock()
}

// Ticket is an announced write: see Store.Expect.
type Ticket struct {
	g    *group
	used bool // guarded by g.mu
}

// Expect announces a write that will reach Batch soon (an answer being
// judged): a leader waits for it, within groupLatency. The ticket is given
// to Batch, or dropped with Settle.
func (s *Store) Expect() *Ticket {
	g := &s.group
	g.mu.Lock()
	g.coming++
	g.mu.Unlock()
	return &Ticket{g: g}
}

// Settle withdraws an announced write that was not queued (safe to call
// after Batch used it).
func (tk *Ticket) Settle() {
	if tk == nil {
		return
	}
	tk.g.mu.Lock()
	tk.useLocked()
	tk.g.mu.Unlock()
	tk.g.poke()
}

func (tk *Ticket) useLocked() {
	if tk != nil && !tk.used {
		tk.used = true
		tk.g.coming--
	}
}

// poke wakes a gathering leader.
func (g *group) poke() {
	select {
	case g.kick <- struct{}{}:
	default:
	}
}

// Batch runs fn in a write transaction shared with the writes queued at
// the same time (see the top of this file) and returns once it is
// committed. Errors are those of Update: fn's own as it is, and
// ErrStoreFailed when the transaction cannot begin or commit. fn returning
// ErrUnchanged is returned as it is, with nothing committed for it.
func (s *Store) Batch(fn func(*store.Tx) error, tk *Ticket) error {
	if s.ReadOnly() {
		return s.ReadOnlyWrite()
	}
	g := &s.group
	c := &groupCall{fn: fn, wake: make(chan struct{}, 1)}
	if g.join(c, tk) {
		<-c.wake
		if c.done {
			return c.err
		}
		g.mu.Lock() // handed the lead
	}
	s.leadLocked(s.gatherKnobs(), func() bool { return c.done })
	return c.err
}

// join queues c and reports whether a leader is at work already (it is
// poked to gather c). If not, the caller leads from now on: join returns
// with g.mu held and g.leading set.
func (g *group) join(c *groupCall, tk *Ticket) (led bool) {
	g.mu.Lock()
	c.arrived = time.Now()
	g.queue = append(g.queue, c)
	if c.then == nil {
		g.callers++
	}
	tk.useLocked()
	if g.leading {
		g.mu.Unlock()
		g.poke()
		return true
	}
	g.leading = true
	return false
}

// ReadOnlyWrite is the error of a write asked of a read-only open.
func (s *Store) ReadOnlyWrite() error {
	return fmt.Errorf("questbox store %s: a write was asked of a read-only open: %w", s.Path(), store.ErrReadOnly)
}

// gatherKnobs are the gathering's bounds: the group* constants, unless a
// test set a latency (Store.Latency, which then bounds the data too, with
// the callers' gap) or the data's own (Store.DataLatency).
func (s *Store) gatherKnobs() gatherKnobs {
	k := gatherKnobs{latency: groupLatency, gap: groupGap, dataLatency: groupDataLatency, dataGap: groupDataGap}
	if s.Latency != 0 {
		k.latency, k.dataLatency, k.dataGap = s.Latency, s.Latency, groupGap
	}
	if s.DataLatency != 0 {
		k.dataLatency = s.DataLatency
	}
	return k
}

// BatchAsync queues fn as Batch does, but as data: it returns at once, and
// then is called with what Batch would have returned, by the goroutine
// that commits the batch, once its commit is decided (it must not block
// nor write to the store; what must wait goes to a goroutine of its own).
// So a thousand results of a busy tick wait for their commit as a
// thousand small values in the queue, not as a thousand goroutines with their
// stacks (docs/design.md, "Memory on a small box"). When no
// leader is gathering, one is started for the queue: it leads until the
// queue is empty, then ends.
func (s *Store) BatchAsync(fn func(*store.Tx) error, tk *Ticket, then func(error)) {
	if s.ReadOnly() {
		tk.Settle()
		then(s.ReadOnlyWrite())
		return
	}
	g := &s.group
	if g.join(&groupCall{fn: fn, then: then}, tk) {
		return
	}
	g.mu.Unlock()
	go s.leadQueue()
}

// leadQueue leads the group commit until its queue is empty: the leader
// of writes queued as data (BatchAsync), which have no goroutine of their
// own to lead.
func (s *Store) leadQueue() {
	g := &s.group
	g.mu.Lock()
	s.leadLocked(s.gatherKnobs(), func() bool { return len(g.queue) == 0 })
}

// leadLocked gathers and commits batches until done reports true, then
// hands the lead on: to the first queued caller waiting on wake, or to a
// new leadQueue when the first queued write is data. It is called with
// g.mu held and g.leading set, and returns with g.mu released.
func (s *Store) leadLocked(k gatherKnobs, done func() bool) {
	g := &s.group
	committed := false
	for !done() {
		calls := g.gatherLocked(k)
		before, after := g.beforeCommit, g.afterCommit
		g.mu.Unlock()
		if before != nil {
			before()
		}
		committed = s.commitGroup(calls) || committed
		if after != nil {
			after()
		}
		g.mu.Lock()
		if len(calls) > 1 {
			g.lastBurst = time.Now()
		}
	}
	switch {
	case len(g.queue) == 0:
		g.leading = false
	case g.queue[0].then == nil:
		g.queue[0].wake <- struct{}{} // lead: it finds itself not done
	default:
		go s.leadQueue() // still leading: the new leader takes over
	}
	g.mu.Unlock()
	if committed {
		s.releaseMapped() // pushed back while commits keep coming
	}
}

// gatherLocked waits while the queue should grow (see gather), then
// takes up to groupMax queued calls.
func (g *group) gatherLocked(k gatherKnobs) []*groupCall {
	var t *time.Timer
	for {
		quiet := false
		if out := g.runsOut; out != nil {
			g.mu.Unlock()
			quiet = !out()
			g.mu.Lock()
		}
		until, ok := gather(time.Now(), gatherState{oldest: g.queue[0].arrived, caller: g.oldestCallerLocked(),
			last: g.queue[len(g.queue)-1].arrived, lastBurst: g.lastBurst,
			queued: len(g.queue), coming: g.coming, quiet: quiet}, k)
		if !ok {
			break
		}
		if t == nil {
			t = time.NewTimer(time.Until(until))
			defer t.Stop()
		} else {
			t.Reset(time.Until(until))
		}
		g.mu.Unlock()
		select {
		case <-g.kick: // a write queued, or an announced one withdrawn
		case <-t.C:
		}
		g.mu.Lock()
	}
	n := min(len(g.queue), groupMax)
	calls := g.queue[:n:n]
	g.queue = g.queue[n:]
	for _, c := range calls {
		if c.then == nil {
			g.callers--
		}
	}
	return calls
}

// oldestCallerLocked is when the oldest queued caller waiting on its
// commit arrived; zero when only data is queued.
func (g *group) oldestCallerLocked() time.Time {
	if g.callers == 0 {
		return time.Time{}
	}
	for _, c := range g.queue {
		if c.then == nil {
			return c.arrived
		}
	}
	return time.Time{}
}

// gatherState is what a gathering leader knows of the writes.
type gatherState struct {
	oldest, last time.Time // when the oldest and the latest queued writes arrived
	caller       time.Time // when the oldest queued caller arrived; zero: only data is queued
	lastBurst    time.Time // when the last batch of several writes committed
	queued       int       // writes queued
	coming       int       // writes announced and not yet queued
	quiet        bool      // no run is out: nothing more of a burst can come
}

// gatherKnobs are the gathering's bounds: latency and gap while a caller
// waits, dataLatency and dataGap while only data is queued.
type gatherKnobs struct {
	latency, gap, dataLatency, dataGap time.Duration
}

// gather decides, at now, whether a leader keeps gathering, and until
// when at the latest (a new write or a withdrawn announcement makes it
// decide again): while writes are announced, or while more than one is
// queued (or a batch of several committed less than the gap ago), the
// latest arrived less than the gap ago and runs are still out (a burst),
// but never past the latency after the oldest queued write, and not once
// groupMax writes are queued. A lone write is committed at once. The gap
// and the latency are the data's while only data is queued; once a
// caller waits, the batch closes at most latency after it arrived.
func gather(now time.Time, st gatherState, k gatherKnobs) (time.Time, bool) {
	deadline, gap := st.oldest.Add(k.dataLatency), k.dataGap
	if !st.caller.IsZero() {
		deadline, gap = earliest(deadline, st.caller.Add(k.latency)), k.gap
	}
	if st.queued >= groupMax || !now.Before(deadline) {
		return time.Time{}, false
	}
	if st.coming > 0 {
		return deadline, true
	}
	recent := now.Sub(st.lastBurst) < gap
	if !st.quiet && (st.queued > 1 || recent) && now.Sub(st.last) < gap {
		return earliest(st.last.Add(gap), deadline), true
	}
	return time.Time{}, false
}

func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// commitGroup runs calls in one transaction and commits it, taking out
// and running alone each call that fails, and wakes every caller with
// its result. It reports whether the batch's transaction committed.
func (s *Store) commitGroup(calls []*groupCall) (committed bool) {
	var solo []*groupCall
	for len(calls) > 0 {
		failed := -1
		all := true // every call unchanged
		err := s.fault()
		if err == nil {
			err = s.db.Update(func(tx *store.Tx) error {
				s.events.Open(tx)
				defer s.events.Open(nil)
				for i, c := range calls {
					c.unchanged = false
					err := c.fn(tx)
					switch {
					case errors.Is(err, ErrUnchanged):
						c.unchanged = true
					case err != nil:
						failed = i
						return err
					default:
						all = false
					}
				}
				if all {
					return ErrUnchanged // nothing to write: no commit
				}
				if err := s.sealHead(tx); err != nil {
					return err // one signature for the batch's ledger records
				}
				return s.events.Flush() // the batch's events, one group
			})
		}
		if failed >= 0 {
			solo = append(solo, calls[failed])
			calls = append(calls[:failed:failed], calls[failed+1:]...)
			continue
		}
		if errors.Is(err, ErrUnchanged) {
			err = nil
		}
		for _, c := range calls {
			c.err = err
			if err == nil && c.unchanged {
				c.err = ErrUnchanged
			}
		}
		break
	}
	for _, c := range calls {
		committed = committed || c.err == nil && !c.unchanged
	}
	for _, c := range solo {
		c.err = s.Update(c.fn) // releases what it mapped itself
	}
	for _, c := range append(calls, solo...) {
		c.done = true
		if c.then != nil {
			c.then(c.err)
			continue
		}
		c.wake <- struct{}{}
	}
	return committed
}
