package engine

import (
	"fmt"

	"github.com/questbox/questbox/engine/budget"
	"github.com/questbox/questbox/engine/domain"
)

// refuse is the tick's answer to a dispatch of n that q's budgets refuse
// (why): see the budgets that hold (engine/budget/budget.go). A follow-up
// pass dispatches nothing and leaves the answer to the tick.
func (r *tickRound) refuse(q *Quest, n *Node, why string) error {
	if q.Running != "" || r.pass {
		return nil
	}
	if domain.IsMember(n.Role) {
		// The abort reads and writes beside the running index: the
		// entries the council's turn kept for later go in first.
		if err := r.t.FlushRunning(); err != nil {
			return err
		}
		full, err := r.t.Node(n.ID)
		if err != nil {
			return err
		}
		return r.t.Abort(q, full, "not run: "+why)
	}
	return r.terminate(q, why)
}

// seatless ends q when its budgets cannot seat its council, every seat a
// run with its reservation, and reports whether the council is refused. A
// council sits only when nothing of its quest runs: nothing can give
// budget back.
func (r *tickRound) seatless(q *Quest) (bool, error) {
	seats, tokens := 0, 0
	for _, p := range q.CouncilReviewers {
		seats, tokens = seats+1, tokens+budget.Reservation(r.t.opt.MaxTokens, p)
	}
	for _, p := range q.CouncilJudges {
		seats, tokens = seats+1, tokens+budget.Reservation(r.t.opt.MaxTokens, p)
	}
	b := budget.Overdraws(q, seats, tokens)
	if b == "" {
		return false, nil
	}
	if r.pass {
		return true, nil // not seated; the tick ends the quest
	}
	return true, r.terminate(q, budget.Refusal(q, b, seats, tokens, fmt.Sprintf("a council of %d", seats)))
}

// terminate ends q, a budget used up (why).
func (r *tickRound) terminate(q *Quest, why string) error {
	if err := r.t.SetQuestStatus(q, QuestTerminated, why); err != nil {
		return err
	}
	r.rep.Terminated = append(r.rep.Terminated, q.ID)
	return nil
}

// settleTokens charges q, once, for the end e of run r (nil when its
// record is lost): what it used (e.tokens), or, ending before its answer
// (e.unsettled), its reservation. A run whose earlier end charged it
// already (an abort, then the killed agent's answer) is charged the
// difference: what it used replaces what was charged. r.Tokens becomes
// the run's charge.
func (t *txn) settleTokens(q *Quest, r *Run, e runEnd) {
	charge, before := e.tokens, 0
	if r != nil {
		if e.unsettled {
			charge = r.Reserved
		}
		if !r.Ended.IsZero() {
			before = r.Tokens
		}
		r.Tokens = charge
	}
	if d := charge - before; d != 0 {
		q.Counters.Tokens += d
		t.Track(q)
	}
}

// underway reports whether this engine has node's run under way: started,
// or queued for a start slot (Engine.start).
func (e *Engine) underway(node string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.inflight[node]
	return ok
}
