package engine

// What the council's rules (package engine/council) ask of the engine: the
// transaction's reads of the indexes they need, of the records and memory
// a sitting council is read from, and the tick's turn at a gate; and the
// names the engine's other files call the council's rules
// by.

import (
	"iter"
	"slices"
	"time"

	"github.com/questbox/questbox/engine/council"
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/gates"
)

var (
	_ council.Txn                         = (*txn)(nil)
	_ council.Round                       = (*tickRound)(nil)
	_ council.SittingReader[[]PromptNode] = (*txn)(nil)
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

// How the tick reads a sitting council (council.SittingReader): heads
// read as NextNodeHead and HeadOf read them, the hypothesis index, the
// running index over a remembered head, the engine's memory of the
// sittings and what it keeps with an owner for its members' prompts.

// NextHeadLike is NextNodeHead with like passed by value
// (council.SittingReader).
func (t *txn) NextHeadLike(id string, like records.NodeHead) (*Node, bool, error) {
	return t.NextNodeHead(id, &like)
}

// HeadOfLike is HeadOf with like passed by value (council.SittingReader).
func (t *txn) HeadOfLike(id string, raw []byte, like records.NodeHead) (*Node, error) {
	return t.HeadOf(id, raw, &like)
}

// HypKey is the key of hyp in the hypothesis index.
func (t *txn) HypKey(hyp string) []byte { return hypKey(hyp) }

// HypIndex is quest's hypothesis index, nil when it has none.
func (t *txn) HypIndex(quest string) council.HypIndex {
	if hb := subRO(t.tx, bHyps, quest); hb != nil {
		return hb
	}
	return nil
}

// Sittings is the engine's memory of the sitting councils' owners.
func (t *txn) Sittings() *sittingOwners { return &t.e.sittings }

// SittingAncestors are the nodes above the members of owner, which has no
// parent, as their prompts show them.
func (t *txn) SittingAncestors(owner *Node) ([]PromptNode, error) {
	var d PromptData
	if _, err := readAncestorsFrom(t.tx, owner.ID, owner, &d); err != nil {
		return nil, err
	}
	return slices.Clip(d.Ancestors), nil
}

// OverlayHead lays the running index over a member's head taken from a
// sitting's entry, as HeadOf lays it over a head read from its record.
func (t *txn) OverlayHead(n *Node) {
	if n.Status != Pending {
		return
	}
	key := t.Claim(store.AppendRunningKey(t.Spare(len(n.Quest)+1+len(n.ID)), n.Quest, n.ID))
	if run := get(&t.curRunning, t.tx.Running(), key); run != nil {
		records.SetRunning(n, run)
	}
}
