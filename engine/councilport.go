package engine

// What the council's rules (package engine/council) ask of the engine: the
// transaction's reads of the indexes they need and the tick's turn at a
// gate; and the names the engine's other files call the council's rules
// by.

import (
	"iter"
	"time"

	"github.com/questbox/questbox/engine/council"
	"github.com/questbox/questbox/gates"
)

var (
	_ council.Txn   = (*txn)(nil)
	_ council.Round = (*tickRound)(nil)
)

// queuedCouncil is the key of Quest.Queued naming the quest's owner in
// council_pending, if any.
const queuedCouncil = council.Queued

// RuleCouncilDissent is the rule of the fact that keeps a council
// member's dissent on its owner: its Where is the member's id, its Actual
// the dissent. The faces read a member's dissent from it.
const RuleCouncilDissent = council.RuleDissent

// memberContractPart is the contract part of a council member's prompt.
func memberContractPart(role string) string { return council.ContractPart(role) }

// MemberPass locks a council member that answered (council.MemberPass).
func (t *txn) MemberPass(q *Quest, n *Node, m *gates.MemberAnswer) error {
	return council.MemberPass(t, q, n, m)
}

// checkCouncil says what is wrong with the council of s, if anything.
func (e *Engine) checkCouncil(s *QuestSpec, add func(format string, args ...any)) {
	council.Check(s, e.HasProvider, add)
}

// Now is the transaction's time.
func (t *txn) Now() time.Time { return t.now }

// Feedback renders facts as the engine feeds them back (Feedback).
func (t *txn) Feedback(facts []gates.Fact) string { return Feedback(facts) }

// HypNode is the id of quest's node whose hypothesis is hyp, or "".
func (t *txn) HypNode(quest, hyp string) string {
	hb := subRO(t.tx, bHyps, quest)
	if hb == nil {
		return ""
	}
	return string(hb.Get(hypKey(hyp)))
}

// FirstPending is the id of quest's oldest pending node, or "".
func (t *txn) FirstPending(quest string) string { return first(t.tx, bPending, quest) }

// PendingNodes are the ids of quest's pending nodes, oldest first.
func (t *txn) PendingNodes(quest string) iter.Seq[string] {
	return func(yield func(string) bool) {
		b := subRO(t.tx, bPending, quest)
		if b == nil {
			return
		}
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if !yield(string(v)) {
				return
			}
		}
	}
}

// LockedNodes are the ids of quest's terminal nodes, newest first.
func (t *txn) LockedNodes(quest string) iter.Seq[string] {
	return func(yield func(string) bool) {
		lb := subRO(t.tx, bLocked, quest)
		if lb == nil {
			return
		}
		c := lb.Cursor()
		for k, v := c.Last(); k != nil; k, v = c.Prev() {
			if !yield(string(v)) {
				return
			}
		}
	}
}

// OpenNodes are the ids of q's nodes that are not terminal: pending,
// proposed, deferred, running and awaiting consent.
func (t *txn) OpenNodes(q *Quest) ([]string, error) {
	var ids []string
	for _, idx := range [][]byte{bPending, bProposed, bDeferred} {
		if b := subRO(t.tx, idx, q.ID); b != nil {
			if err := b.ForEach(func(_, v []byte) error { ids = append(ids, string(v)); return nil }); err != nil {
				return nil, err
			}
		}
	}
	if q.Running != "" {
		ids = append(ids, q.Running)
	}
	if q.Counts.Get(AwaitingConsent) > 0 {
		err := t.tx.Consent().ForEach(func(k, v []byte) error {
			if string(v) == q.ID {
				ids = append(ids, string(k))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// Seatless reports whether q's budgets cannot seat a council, ending q
// when so (seatless).
func (r *tickRound) Seatless(q *Quest) (bool, error) { return r.seatless(q) }

// Council is q's turn while its council sits (council).
func (r *tickRound) Council(q *Quest) error { return r.council(q) }
