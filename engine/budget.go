package engine

import (
	"fmt"

	"github.com/questbox/questbox/engine/domain"
)

// Budgets that hold (docs/budgets.md).
//
// max_agent_runs and token_budget are checked before every dispatch the
// tick or a follow-up pass (chain.go) makes, whatever the kind of run (a
// worker, an owner, a Team stage, a node tried again, a council member),
// and before a council (an owner's or a phase gate's) is seated, for all
// its seats at once:
//
//   - a run counts as used from its dispatch (Counters.AgentRuns, folded
//     from the running entries, dispatch.go), so one in flight is never
//     counted late;
//   - a run reserves tokens at its dispatch (Run.Reserved, in its running
//     entry): its provider's max_tokens plus promptTokens when it has
//     one, else runTokens. The tokens the quest has used plus those its
//     runs in flight reserve plus the new run's reservation must fit in
//     token_budget. When the run ends, what it used replaces what it
//     reserved (endRun, settleTokens).
//
// A dispatch that does not fit waits while a run of its quest is in
// flight (that run may end under its reservation, or unanswered, which
// gives its run back); otherwise the quest ends (terminated) with a
// reason naming the budget, what is used and what the dispatch needs. A
// council member is the exception: its council was seated within the
// budgets, so only a member tried again (or one whose fellows used more
// than they reserved) can be refused, and it is aborted with that reason
// instead, so that its council decides with the votes it has: they were
// paid for. A follow-up pass does neither: it leaves the refused dispatch
// to the next tick, which ends what the pass would have.
//
// Overshoot: a quest passes its token_budget only when runs use more
// than they reserved, and by at most what the runs in flight at its last
// dispatch used beyond their reservations (one run, but for a council's
// members).

// The reservation of a run (docs/budgets.md). The box counts four bytes
// a token when a provider reports no usage (agent.EstimateTokens).
const (
	// runTokens is what a run reserves when its provider caps no answer:
	// 16 KiB of prompt and answer together.
	runTokens = 4096
	// promptTokens is the prompt's share of the reservation of a run
	// whose provider caps its answer (Options.MaxTokens): 8 KiB.
	promptTokens = 2048
)

// reservation is what a run on provider reserves of its quest's
// token_budget, under the options opt (a transaction's: reload.go).
func reservation(opt *Options, provider string) int {
	if m := opt.MaxTokens[provider]; m > 0 {
		return promptTokens + m
	}
	return runTokens
}

// The budgets a dispatch can pass.
const (
	budgetRuns   = "max_agent_runs"
	budgetTokens = "token_budget"
)

// overdraws says which budget of q the dispatch of runs more runs,
// reserving tokens together, would pass, or "" if they fit.
func overdraws(q *Quest, runs, tokens int) string {
	switch {
	case q.Counters.AgentRuns+runs > q.Limits.MaxAgentRuns:
		return budgetRuns
	case q.Counters.Tokens+q.ReservedTokens+tokens > q.Limits.TokenBudget:
		return budgetTokens
	}
	return ""
}

// refusal is the reason a dispatch that overdraws budget of q gives:
// the budget, what q used, and what the dispatch (what) needs, e.g.
// "max_agent_runs 5: 4 used, a council of 5 needs 5".
func refusal(q *Quest, budget string, runs, tokens int, what string) string {
	if budget == budgetRuns {
		return fmt.Sprintf("max_agent_runs %d: %d used, %s needs %d", q.Limits.MaxAgentRuns, q.Counters.AgentRuns, what, runs)
	}
	return fmt.Sprintf("token_budget %d: %d used and %d reserved by runs in flight, %s reserves %d",
		q.Limits.TokenBudget, q.Counters.Tokens, q.ReservedTokens, what, tokens)
}

// admit says why q's budgets refuse a run of n on provider, which
// reserves reserve tokens, or "".
func admit(q *Quest, n *Node, provider string, reserve int) string {
	b := overdraws(q, 1, reserve)
	if b == "" {
		return ""
	}
	return refusal(q, b, 1, reserve, fmt.Sprintf("a run of %s (%s) on %s", n.ID, n.Role, provider))
}

// refuse is the tick's answer to a dispatch of n that q's budgets refuse
// (why): see the top of this file. A follow-up pass dispatches nothing and
// leaves the answer to the tick.
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
		seats, tokens = seats+1, tokens+reservation(r.t.opt, p)
	}
	for _, p := range q.CouncilJudges {
		seats, tokens = seats+1, tokens+reservation(r.t.opt, p)
	}
	b := overdraws(q, seats, tokens)
	if b == "" {
		return false, nil
	}
	if r.pass {
		return true, nil // not seated; the tick ends the quest
	}
	return true, r.terminate(q, refusal(q, b, seats, tokens, fmt.Sprintf("a council of %d", seats)))
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
