package engine

import (
	"errors"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/followup"
)

// Follow-up work (docs/design.md, "When work is dispatched").
//
// The tick is the cadence of new work: each active quest's turn (its next
// node, an owner turn), the deferred nodes coming back, the budgets and
// the consents that expire. Work that a commit enables is not new: a Team's
// next stage or its revision, a council's members once it sits and its
// merge once the last of them answered, a phase gate's council once its
// phase's work is done, a retry after a FAIL. Waiting a tick for each
// made a Team with one revision cost five ticks and a council three.
//
// So the commit that enables such work names it (txn.followUp: the quest,
// and the node when there is one) and, once it committed, wakes a
// follow-up pass (Engine.followUpPass) for those quests only. The pass runs on
// Serve's goroutine, between ticks, as one write transaction of its own:
// the dispatching writer stays one. It dispatches through the tick's own
// code (tickRound: queue, council, council.PhaseGates), so max_parallel and every
// check of a dispatch hold as they do at a tick; it terminates nothing
// and brings nothing back (the tick's work), and it never picks a fresh
// node: the one-node-per-tick pace of the v1/v2 workers stays the tick's.
// A quest that found no free slot stays named for the next pass, which
// the end of any run wakes.
//
// Nothing of it is durable, and nothing needs to be: the work a commit
// enabled is in the store (a pending stage, a sitting council), and the
// next tick dispatches whatever a crash kept a pass from dispatching.
// Outside Serve (`questbox tick`, tests that tick by hand) no pass runs,
// and the tick alone dispatches, as before.

// FollowUp notes that this transaction enables follow-up work of q: node
// (a stage or a retry), or "" for q's council or phase gates. The notes
// reach the engine once the transaction committed (engineWrite).
func (t *txn) FollowUp(q *Quest, node string) {
	if t.e.chain.On() {
		t.follows = append(t.follows, followup.Follow{Quest: q.ID, Node: node})
	}
}

// chainHost is the engine as its follow-up chain asks of it
// (followup.Engine). The chain calls it with the chain's mutex held: e.mu
// is taken inside it, never the other way round.
type chainHost struct{ e *Engine }

var _ followup.Engine = chainHost{}

// Hold raises the wait group for a pass made due, unless Shutdown began:
// then no pass is made (and the wait group is not raised: Shutdown waits
// on it).
func (h chainHost) Hold() bool {
	e := h.e
	e.mu.Lock()
	closing := e.closing
	if !closing {
		e.wg.Add(1)
	}
	e.mu.Unlock()
	return !closing
}

// Release gives back the count of a pass due that will not be made.
func (h chainHost) Release() { h.e.wg.Done() }

// SlotFree reports whether max_parallel leaves a run slot free.
func (h chainHost) SlotFree() bool {
	e := h.e
	e.mu.Lock()
	free := e.opt.MaxParallel-len(e.inflight)-e.starting > 0
	e.mu.Unlock()
	return free
}

// followUpPass is one pass: the follow-up work of the quests noted since
// the last, dispatched in one write transaction and started. It is Serve's,
// between its ticks.
func (e *Engine) followUpPass() {
	fs, held := e.chain.Take()
	if held {
		defer e.wg.Done()
	}
	if len(fs) == 0 || e.readOnly {
		return
	}
	e.mu.Lock()
	closing := e.closing
	e.mu.Unlock()
	if closing {
		return
	}
	var r *tickRound
	err := e.update(func(t *txn) error {
		r = &tickRound{e: e, t: t, pass: true}
		return r.followUps(fs)
	})
	if err != nil {
		if r != nil {
			e.mu.Lock()
			e.starting -= r.reserved
			e.mu.Unlock()
		}
		// The work is in the store: the next tick dispatches it.
		e.log.Error("follow-up dispatch failed; the next tick dispatches the work", "err", err)
		return
	}
	e.chain.Park(r.parked)
	if e.startHook != nil {
		e.startHook()
	}
	e.start(r.ds, nil)
}

// followUps is a pass inside its transaction (a retry starts it afresh):
// each noted quest's follow-up turn, with the slots max_parallel leaves.
func (r *tickRound) followUps(fs []followup.Quest) error {
	e, t := r.e, r.t
	r.ds, r.parked, r.reserved = r.ds[:0], r.parked[:0], 0
	r.rep = TickReport{}
	e.mu.Lock()
	r.slots = e.opt.MaxParallel - len(e.inflight) - e.starting
	e.mu.Unlock()
	t.later = &runningLater{}
	for _, f := range fs {
		// A member's entries kept for later (council) are put before the
		// next quest reads the running index.
		if err := t.FlushRunning(); err != nil {
			return err
		}
		q, err := t.Peek(f.ID)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		r.starved = false
		if err := r.follow(q, f.Nodes); err != nil {
			return err
		}
		if r.starved {
			r.parked = append(r.parked, f)
		}
	}
	if err := t.FlushRunning(); err != nil {
		return err
	}
	if err := t.unchanged(); err != nil {
		return err
	}
	e.mu.Lock()
	e.starting += len(r.ds)
	e.mu.Unlock()
	r.reserved = len(r.ds)
	return nil
}

// follow is q's follow-up turn: its sitting council (members to
// dispatch, or the merge), else, when nothing of q runs, a phase gate's
// council, else the first of nodes that still waits, pending. A quest
// that is not active, or whose budget is spent, waits for the tick.
func (r *tickRound) follow(q *Quest, nodes []string) error {
	t := r.t
	if q.Status != QuestActive || t.OverBudget(q) != "" {
		return nil
	}
	if over, err := r.sittingOrGated(q); over || err != nil {
		return err
	}
	for _, id := range nodes {
		n, err := t.NodeHead(id)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		// A member or a gate is its council's (above); anything else
		// that left pending since it was noted was dispatched or
		// settled by another write.
		if n.Quest != q.ID || n.Status != Pending || domain.IsMember(n.Role) || domain.IsGateRole(n.Role) {
			continue
		}
		return r.dispatchPicked(q, n, r.dispatchable(q))
	}
	return nil
}
