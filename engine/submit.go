package engine

import (
	"context"
	"fmt"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/humangate"
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/gates"
)

// Work is a node's prompt as an external agent receives it from Next.
type Work struct {
	Node       string `json:"node"`
	Quest      string `json:"quest"`
	Role       string `json:"role"`
	Hypothesis string `json:"hypothesis"`
	Attempt    int    `json:"attempt"`
	Prompt     string `json:"prompt"`
}

// Next returns the prompt of the quest's next node: its pending owner in
// team mode (unless a council decides the owner's turns: then nothing
// while the owner waits or its council sits), else its oldest pending
// node. It changes nothing. It returns
// nil when nothing is pending.
func (e *Engine) Next(quest string) (*Work, error) {
	var w *Work
	err := e.store.view(func(tx *store.Tx) error {
		q, ok, err := getQuest(tx, quest)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("quest %s: %w", quest, ErrNotFound)
		}
		var n *Node
		switch {
		case q.EgressConsent != "":
			return nil // held until its egress consent (package engine/humangate)
		case q.HasCouncil() && q.Queued[queuedCouncil] != "":
			// The council sits: its members run their own providers
			// (council.go), and nothing else of the quest runs meanwhile.
			return nil
		case len(q.RoleProviders) > 0:
			// Per-role providers: the tick runs the nodes of the
			// providers it spawns; next serves only the external ones.
			if n, err = nextExternal(tx, q); err != nil || n == nil {
				return err
			}
		default:
			id := q.Queued[RoleOwner]
			if q.HasCouncil() {
				id = "" // the council decides the owner's turns: next offers workers only
			}
			if id == "" {
				id = first(tx, bPending, quest)
			}
			if id == "" || (q.HasCouncil() && id == q.Queued[RoleOwner]) {
				return nil
			}
			if n, err = records.ReadNode(tx, id); err != nil {
				return err
			}
		}
		if q.HasCouncil() && (n.Role == RoleOwner || domain.IsMember(n.Role)) {
			return nil
		}
		req, err := e.buildRequest(tx, nil, q, n)
		if err != nil {
			return err
		}
		w = &Work{Node: n.ID, Quest: q.ID, Role: n.Role, Hypothesis: n.Hypothesis, Attempt: req.Attempt, Prompt: req.Prompt}
		return nil
	})
	return w, err
}

// nextExternal is q's next node an outside agent answers: its pending
// owner, else its oldest pending node, whose provider is external; nil if
// none is.
func nextExternal(tx *store.Tx, q *Quest) (*Node, error) {
	if id := q.Queued[RoleOwner]; id != "" {
		n, err := records.ReadNode(tx, id)
		if err != nil || (n.Status == Pending && q.ProviderFor(n) == ProviderExternal) {
			return n, err
		}
	}
	b := subRO(tx, bPending, q.ID)
	if b == nil {
		return nil, nil
	}
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		n, err := records.ReadNode(tx, string(v))
		if err != nil {
			return nil, err
		}
		// A running node stays in the pending index (schema 6).
		if n.Status == Pending && q.ProviderFor(n) == ProviderExternal {
			return n, nil
		}
	}
	return nil, nil
}

// SubmitResult is the verdict on one submission.
type SubmitResult struct {
	Node      string       `json:"node"`
	Outcome   string       `json:"outcome"` // PASS, FAIL, REVIEW, DEFERRED
	Status    Status       `json:"status"`  // the node's status afterwards
	Verdict   string       `json:"verdict,omitempty"`
	Tries     int          `json:"tries"`
	MaxTries  int          `json:"max_tries"`
	Facts     []gates.Fact `json:"facts,omitempty"`
	Feedback  string       `json:"feedback,omitempty"`
	ClaimHash string       `json:"claim_hash"`
	Children  []string     `json:"children,omitempty"`
	// Reason says why the answer was deferred or sent to a human.
	Reason string `json:"reason,omitempty"`
}

// Submit is an external agent's answer for a pending node: it is
// dispatched and judged exactly as a spawned agent's answer would be, and
// recorded in one transaction (through the group commit: submits that
// arrive together share it). It returns once the verdict is committed.
func (e *Engine) Submit(ctx context.Context, quest, node string, raw []byte) (SubmitResult, error) {
	if err := e.writable(); err != nil {
		return SubmitResult{}, err // before the gate runs: nothing could be recorded
	}
	q, err := e.Quest(quest)
	if err != nil {
		return SubmitResult{}, err
	}
	n, err := e.Node(node)
	if err != nil {
		return SubmitResult{}, err
	}
	if err := submittable(q, n); err != nil {
		return SubmitResult{}, err
	}
	// Announced before it is judged: submits arriving together share a
	// commit (engine/commit).
	tk := e.store.expect()
	defer tk.Settle()
	res := e.judge(ctx, e.conf(), q, n, agent.Reply{Output: raw, Tokens: agent.EstimateTokens("", raw)}, nil)
	var out SubmitResult
	budget := ""
	err = e.batch(func(t *txn) error {
		budget = ""
		q, err := t.Quest(quest)
		if err != nil {
			return err
		}
		cur, err := t.Node(node)
		if err != nil {
			return err
		}
		if err := submittable(q, cur); err != nil {
			return err
		}
		if cur.Tries != n.Tries {
			return fmt.Errorf("node %s changed while its answer was judged; submit again: %w", node, ErrBusy)
		}
		if reason := t.OverBudget(q); reason != "" {
			budget = reason
			return t.SetQuestStatus(q, QuestTerminated, reason)
		}
		run, err := t.newRun(q, cur, ProviderExternal)
		if err != nil {
			return err
		}
		q.Counters.AgentRuns++
		if err := t.apply(q, cur, run.ID, res); err != nil {
			return err
		}
		out = SubmitResult{Node: cur.ID, Outcome: res.outcome(), Status: cur.Status, Verdict: cur.Verdict, Tries: cur.Tries,
			MaxTries: e.maxTries(q, cur.Role), Facts: res.facts, Feedback: res.feedback, ClaimHash: res.claim, Reason: res.why}
		return nil
	}, tk)
	if err == nil && budget != "" {
		return SubmitResult{}, fmt.Errorf("quest %s is now terminated: %s; the answer was not recorded: %w", quest, budget, ErrInvalid)
	}
	if err == nil && !judged(out.Outcome) {
		// Not judged at all: the quest stopped (its provider or gate
		// profile is missing). Say why instead of an empty verdict.
		if q, qerr := e.Quest(quest); qerr == nil && q.Status != QuestActive {
			return SubmitResult{}, fmt.Errorf("the answer was not judged: quest %s is %s: %s: %w", q.ID, q.Status, q.Reason, ErrInvalid)
		}
	}
	return out, err
}

func submittable(q *Quest, n *Node) error {
	switch {
	case n.Quest != q.ID:
		return fmt.Errorf("node %s belongs to quest %s, not %s: %w", n.ID, n.Quest, q.ID, ErrInvalid)
	case n.Status.Terminal():
		return fmt.Errorf("node %s is %s: the ratchet locked it and it takes no more submissions: %w", n.ID, n.Status, ErrLocked)
	case q.Status != QuestActive:
		return fmt.Errorf("quest %s is %s (%s): %w", q.ID, q.Status, q.Reason, ErrInvalid)
	case q.EgressConsent != "":
		// Its answer would go to the L2 judge, or on to the quest's
		// providers in the next prompts.
		return fmt.Errorf("%s; the answer was not recorded: %w", humangate.EgressHeld(q), ErrBusy)
	case n.Status == Running:
		return fmt.Errorf("node %s is running (dispatched to a provider): %w", n.ID, ErrBusy)
	case n.Status != Pending:
		return fmt.Errorf("node %s is %s; only a pending node takes a submission: %w", n.ID, n.Status, ErrBusy)
	case domain.IsMember(n.Role):
		return fmt.Errorf("node %s is a council %s: its own provider answers it, not an outside agent: %w", n.ID, n.Role, ErrInvalid)
	case n.Role == RoleOwner && q.HasCouncil():
		return fmt.Errorf("node %s is the owner of a quest with a council: its council decides, not an outside agent: %w", n.ID, ErrInvalid)
	case len(q.RoleProviders) > 0 && q.ProviderFor(n) != ProviderExternal:
		// A quest with per-role providers: the box runs this node on
		// its own provider; an outside answer would replace that model.
		return fmt.Errorf("node %s (%s) runs on provider %q, not an outside agent; `next` serves the nodes an outside agent answers: %w",
			n.ID, n.Role, q.ProviderFor(n), ErrInvalid)
	}
	return nil
}

// judged reports whether outcome is a gate's word on an answer.
func judged(outcome string) bool {
	switch outcome {
	case "PASS", "FAIL", "REVIEW", "DEFERRED":
		return true
	}
	return false
}
