package engine

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/questbox/questbox/engine/domain"
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

// follow is a commit's note that it enabled follow-up work of quest: node
// when the work is that node (a stage, a retry), "" for the quest's
// council or phase gates.
type follow struct {
	quest, node string
}

// followQuest is a quest a pass looks at, with the nodes named for it.
type followQuest struct {
	quest string
	nodes []string
}

// chain is the engine's list of quests with follow-up work, for Serve's
// passes.
type chain struct {
	mu sync.Mutex // guards serving, due, quests, order
	// serving: Serve runs and passes are made; otherwise notes are
	// dropped (the tick dispatches the work).
	serving bool
	// due: a pass is due (wake was sent) and holds a count of the
	// engine's wait group, so that Engine.Wait waits for the work a
	// result enables as it waits for the result.
	due    bool
	quests map[string][]string
	order  []string
	// wake has room for one value: "a pass is due", coalesced.
	wake chan struct{}
	// on is serving, read without the lock by followUp: outside Serve a
	// transaction notes nothing (a busy cycle's thousand FAILs would
	// each allocate a note for nobody).
	on atomic.Bool
}

// FollowUp notes that this transaction enables follow-up work of q: node
// (a stage or a retry), or "" for q's council or phase gates. The notes
// reach the engine once the transaction committed (engineWrite).
func (t *txn) FollowUp(q *Quest, node string) {
	if t.e.chain.on.Load() {
		t.follows = append(t.follows, follow{q.ID, node})
	}
}

// startChain makes passes from now on: Serve runs.
func (e *Engine) startChain() {
	c := &e.chain
	c.mu.Lock()
	c.serving = true
	c.on.Store(true)
	c.mu.Unlock()
}

// stopChain drops the notes and the pass due: Serve returns, and the
// next tick (of the next Serve, or `questbox tick`) dispatches the work.
func (e *Engine) stopChain() {
	c := &e.chain
	c.mu.Lock()
	defer c.mu.Unlock()
	c.serving = false
	c.on.Store(false)
	clear(c.quests)
	c.order = c.order[:0]
	select {
	case <-c.wake:
	default:
	}
	if c.due {
		c.due = false
		e.wg.Done()
	}
}

// chainNotes hands the notes of a committed write to the next pass.
func (e *Engine) chainNotes(fs []follow) {
	if len(fs) == 0 {
		return
	}
	c := &e.chain
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.serving {
		return
	}
	for _, f := range fs {
		e.noteLocked(f.quest, f.node)
	}
	e.dueLocked()
}

// noteLocked adds node (if any) to quest's notes; c.mu is held.
func (e *Engine) noteLocked(quest, node string) {
	c := &e.chain
	if c.quests == nil {
		c.quests = map[string][]string{}
	}
	nodes, ok := c.quests[quest]
	if !ok {
		c.order = append(c.order, quest)
	}
	if node != "" && !slices.Contains(nodes, node) {
		nodes = append(nodes, node)
	}
	c.quests[quest] = nodes
}

// slotFreed wakes a pass for the quests that found no free slot, if
// any: a run just left its slot.
func (e *Engine) slotFreed() {
	c := &e.chain
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.serving && len(c.order) > 0 {
		e.dueLocked()
	}
}

// dueLocked makes a pass due, unless one is; c.mu is held. Once Shutdown
// began, no pass is made (and the wait group is not raised: Shutdown
// waits on it).
func (e *Engine) dueLocked() {
	c := &e.chain
	if c.due {
		return
	}
	e.mu.Lock()
	closing := e.closing
	if !closing {
		e.wg.Add(1)
	}
	e.mu.Unlock()
	if closing {
		return
	}
	c.due = true
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// takeChain takes the quests noted so far, in the order they were first
// noted, and whether the pass holds a count of the wait group (which
// it gives back with passDone).
func (e *Engine) takeChain() ([]followQuest, bool) {
	c := &e.chain
	c.mu.Lock()
	defer c.mu.Unlock()
	held := c.due
	c.due = false
	out := make([]followQuest, 0, len(c.order))
	for _, id := range c.order {
		out = append(out, followQuest{id, c.quests[id]})
	}
	clear(c.quests)
	c.order = c.order[:0]
	return out, held
}

// parkChain keeps fs, quests a pass found no free slot for, for the next
// pass, without making one due: the end of a run does (slotFreed).
func (e *Engine) parkChain(fs []followQuest) {
	c := &e.chain
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.serving {
		return
	}
	for _, f := range fs {
		if len(f.nodes) == 0 {
			e.noteLocked(f.quest, "")
		}
		for _, n := range f.nodes {
			e.noteLocked(f.quest, n)
		}
	}
	// A run that ended between the pass's look at the slots and now
	// found nothing parked (slotFreed): the pass it would have woken is
	// made due here, or the parked work would wait for the next tick.
	e.mu.Lock()
	free := e.opt.MaxParallel-len(e.inflight)-e.starting > 0
	e.mu.Unlock()
	if free && len(fs) > 0 {
		e.dueLocked()
	}
}

// followUpPass is one pass: the follow-up work of the quests noted since
// the last, dispatched in one write transaction and started. It is Serve's,
// between its ticks.
func (e *Engine) followUpPass() {
	fs, held := e.takeChain()
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
	e.parkChain(r.parked)
	if e.startHook != nil {
		e.startHook()
	}
	e.start(r.ds, nil)
}

// followUps is a pass inside its transaction (a retry starts it afresh):
// each noted quest's follow-up turn, with the slots max_parallel leaves.
func (r *tickRound) followUps(fs []followQuest) error {
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
		q, err := t.Peek(f.quest)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		r.starved = false
		if err := r.follow(q, f.nodes); err != nil {
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
