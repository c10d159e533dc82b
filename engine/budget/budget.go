package budget

import (
	"fmt"
	"time"

	"github.com/questbox/questbox/engine/domain"
)

// Budgets that hold (docs/budgets.md).
//
// max_agent_runs and token_budget are checked before every dispatch the
// tick or a follow-up pass (engine/chain.go) makes, whatever the kind of
// run (a worker, an owner, a Team stage, a node tried again, a council
// member), and before a council (an owner's or a phase gate's) is seated,
// for all its seats at once:
//
//   - a run counts as used from its dispatch (Counters.AgentRuns, folded
//     from the running entries, engine/dispatch.go), so one in flight is
//     never counted late;
//   - a run reserves tokens at its dispatch (Run.Reserved, in its running
//     entry): its provider's max_tokens plus PromptTokens when it has
//     one, else RunTokens. The tokens the quest has used plus those its
//     runs in flight reserve plus the new run's reservation must fit in
//     token_budget. When the run ends, what it used replaces what it
//     reserved (the engine's endRun, settleTokens).
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
	// RunTokens is what a run reserves when its provider caps no answer:
	// 16 KiB of prompt and answer together.
	RunTokens = 4096
	// PromptTokens is the prompt's share of the reservation of a run
	// whose provider caps its answer (Options.MaxTokens): 8 KiB.
	PromptTokens = 2048
)

// Reservation is what a run on provider reserves of its quest's
// token_budget, under maxTokens, the providers' caps on an answer (the
// Options.MaxTokens of a transaction's options: engine/reload.go).
func Reservation(maxTokens map[string]int, provider string) int {
	if m := maxTokens[provider]; m > 0 {
		return PromptTokens + m
	}
	return RunTokens
}

// The budgets a dispatch can pass.
const (
	MaxAgentRuns = "max_agent_runs"
	TokenBudget  = "token_budget"
)

// Overdraws says which budget of q the dispatch of runs more runs,
// reserving tokens together, would pass, or "" if they fit.
func Overdraws(q *domain.Quest, runs, tokens int) string {
	switch {
	case q.Counters.AgentRuns+runs > q.Limits.MaxAgentRuns:
		return MaxAgentRuns
	case q.Counters.Tokens+q.ReservedTokens+tokens > q.Limits.TokenBudget:
		return TokenBudget
	}
	return ""
}

// Refusal is the reason a dispatch that overdraws budget of q gives:
// the budget, what q used, and what the dispatch (what) needs, e.g.
// "max_agent_runs 5: 4 used, a council of 5 needs 5".
func Refusal(q *domain.Quest, budget string, runs, tokens int, what string) string {
	if budget == MaxAgentRuns {
		return fmt.Sprintf("max_agent_runs %d: %d used, %s needs %d", q.Limits.MaxAgentRuns, q.Counters.AgentRuns, what, runs)
	}
	return fmt.Sprintf("token_budget %d: %d used and %d reserved by runs in flight, %s reserves %d",
		q.Limits.TokenBudget, q.Counters.Tokens, q.ReservedTokens, what, tokens)
}

// Admit says why q's budgets refuse a run of n on provider, which
// reserves reserve tokens, or "".
func Admit(q *domain.Quest, n *domain.Node, provider string, reserve int) string {
	b := Overdraws(q, 1, reserve)
	if b == "" {
		return ""
	}
	return Refusal(q, b, 1, reserve, fmt.Sprintf("a run of %s (%s) on %s", n.ID, n.Role, provider))
}

// Reached says which of the limits l the counters c have reached, or "".
func Reached(l domain.Limits, c domain.Counters) string {
	switch {
	case c.AgentRuns >= l.MaxAgentRuns:
		return fmt.Sprintf("max_agent_runs reached (%d of %d)", c.AgentRuns, l.MaxAgentRuns)
	case c.WallUsed >= l.WallClock:
		return fmt.Sprintf("wall_clock budget used (%s of %s)", c.WallUsed.Round(time.Second), l.WallClock)
	case c.Tokens >= l.TokenBudget:
		return fmt.Sprintf("token_budget used (%d of %d)", c.Tokens, l.TokenBudget)
	}
	return ""
}
