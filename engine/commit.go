package engine

import (
	"errors"
	"fmt"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Group commit (SPEC §3: one tick costs O(1) fsyncs end to end).
//
// Writes that arrive close together — run results, submits, consents,
// device events, outbox acknowledgements — share one bbolt transaction and
// so one commit (two fdatasyncs) instead of one each. Each caller still
// returns only after the commit that holds its write succeeded: what is
// acknowledged is durable.
//
// There is no timer on the common path: the first writer to arrive leads,
// and commits at once whatever is queued; writers that arrive while its
// commit syncs queue up and go together in the next one. What makes the
// results of one tick share a commit is that the engine announces a write
// before it is ready (Store.expect: an agent answered and its answer is
// being judged): a leader waits for announced writes, up to
// groupLinger, before it commits. A lone write with nothing announced
// commits at once.
//
// Semantics of a batch, as bbolt's DB.Batch: the functions run one after
// the other in one transaction, each seeing the writes of those before
// it. A function that returns an error may have written part of its
// change, so the whole transaction is rolled back, the others run again
// without it (a function may therefore run more than once, and must only
// change state it resets at its start), and the failed one runs alone, in
// a transaction of its own, whose error is its caller's. A function that
// returns errUnchanged wrote nothing (that is its contract) and does not
// disturb the batch; a batch of such functions only is rolled back, not
// committed. A commit that fails (a full disk, an I/O error) fails every
// write in it with ErrStoreFailed; each caller decides whether to retry.

const (
	// groupLinger bounds how long a leader waits for announced writes.
	// It is real time, as bbolt's MaxBatchDelay: a commit-latency knob,
	// not a schedule (tests on a fake clock never advance it).
	groupLinger = 50 * time.Millisecond
	// groupMax bounds the writes in one transaction.
	groupMax = 1000
)

// groupCall is one write waiting for a group commit.
type groupCall struct {
	fn   func(*bolt.Tx) error
	wake chan struct{} // done or lead: closed or sent once
	// Set by the leader before wake.
	done      bool
	err       error
	unchanged bool // fn returned errUnchanged in the committed batch
}

// group is the store's group committer.
type group struct {
	mu      sync.Mutex // guards queue, leading, coming
	queue   []*groupCall
	leading bool // a leader is gathering or committing
	coming  int  // writes announced by expect and not yet queued
	kick    chan struct{}
}

// Ticket is an announced write: see Store.expect.
type ticket struct {
	g    *group
	used bool // guarded by g.mu
}

// expect announces a write that will reach batch soon (an answer being
// judged): a leader waits for it, up to groupLinger. The ticket is given
// to batch, or dropped with settle.
func (s *Store) expect() *ticket {
	g := &s.group
	g.mu.Lock()
	g.coming++
	g.mu.Unlock()
	return &ticket{g: g}
}

// settle withdraws an announced write that was not queued (safe to call
// after batch used it).
func (tk *ticket) settle() {
	if tk == nil {
		return
	}
	tk.g.mu.Lock()
	tk.useLocked()
	tk.g.mu.Unlock()
	tk.g.poke()
}

func (tk *ticket) useLocked() {
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

// batch runs fn in a write transaction shared with the writes queued at
// the same time (see the top of this file) and returns once it is
// committed. Errors are those of update: fn's own as it is, and
// ErrStoreFailed when the transaction cannot begin or commit. fn returning
// errUnchanged is returned as it is, with nothing committed for it.
func (s *Store) batch(fn func(*bolt.Tx) error, tk *ticket) error {
	if s.ReadOnly() {
		return fmt.Errorf("questbox store %s: a write was asked of a read-only open: %w", s.Path(), ErrReadOnly)
	}
	g := &s.group
	c := &groupCall{fn: fn, wake: make(chan struct{}, 1)}
	linger := s.linger
	if linger == 0 {
		linger = groupLinger
	}
	g.mu.Lock()
	g.queue = append(g.queue, c)
	tk.useLocked()
	if g.leading {
		g.mu.Unlock()
		g.poke()
		<-c.wake
		if c.done {
			return c.err
		}
		g.mu.Lock() // handed the lead
	}
	g.leading = true
	for !c.done {
		calls := g.gatherLocked(linger)
		g.mu.Unlock()
		s.commitGroup(calls)
		g.mu.Lock()
	}
	if len(g.queue) > 0 {
		next := g.queue[0]
		next.wake <- struct{}{} // lead: it finds itself not done
	} else {
		g.leading = false
	}
	g.mu.Unlock()
	return c.err
}

// gatherLocked waits, while writes are announced and up to linger,
// for them to be queued, then takes up to groupMax queued calls.
func (g *group) gatherLocked(linger time.Duration) []*groupCall {
	if g.coming > 0 && len(g.queue) < groupMax {
		t := time.NewTimer(linger)
		defer t.Stop()
	wait:
		for g.coming > 0 && len(g.queue) < groupMax {
			g.mu.Unlock()
			select {
			case <-g.kick:
				g.mu.Lock()
			case <-t.C:
				g.mu.Lock()
				break wait
			}
		}
	}
	n := min(len(g.queue), groupMax)
	calls := g.queue[:n:n]
	g.queue = g.queue[n:]
	return calls
}

// commitGroup runs calls in one transaction and commits it, taking out
// and running alone each call that fails, and wakes every caller with
// its result.
func (s *Store) commitGroup(calls []*groupCall) {
	var solo []*groupCall
	for len(calls) > 0 {
		failed := -1
		all := true // every call unchanged
		err := s.fault()
		if err == nil {
			err = s.db.Update(func(tx *bolt.Tx) error {
				for i, c := range calls {
					c.unchanged = false
					err := c.fn(tx)
					switch {
					case errors.Is(err, errUnchanged):
						c.unchanged = true
					case err != nil:
						failed = i
						return err
					default:
						all = false
					}
				}
				if all {
					return errUnchanged // nothing to write: no commit
				}
				return nil
			})
		}
		if failed >= 0 {
			solo = append(solo, calls[failed])
			calls = append(calls[:failed:failed], calls[failed+1:]...)
			continue
		}
		if errors.Is(err, errUnchanged) {
			err = nil
		}
		for _, c := range calls {
			c.err = err
			if err == nil && c.unchanged {
				c.err = errUnchanged
			}
		}
		break
	}
	for _, c := range solo {
		c.err = s.update(c.fn)
	}
	for _, c := range append(calls, solo...) {
		c.done = true
		c.wake <- struct{}{}
	}
}
