package engine

import (
	"fmt"
	"slices"

	"github.com/questbox/questbox/engine/domain"
)

// Planting writes councils and Teams (docs/design.md, "Councils and Teams")
// into a store as the engine keeps them — nodes in their indexes and counts,
// terminal ones under a lock sequence and a ledger record, edges, events —
// for the tests and fixtures of the faces that show them (the API views,
// `quest show`, the dashboard, the LEDs, export, verify and salvage). It does
// not consult the ratchet: the moves of councils and Teams are the tick's to
// make; planting only lays out their result, so that a store holding it is
// indistinguishable from one the engine wrote.

// PlantQuest changes quest id's record with set (its council, Teams,
// per-role providers); its status, counts and running node are the
// engine's and are kept.
func (e *Engine) PlantQuest(id string, set func(*Quest)) error {
	if err := e.writable(); err != nil {
		return err
	}
	return e.update(func(t *txn) error {
		q, err := t.Quest(id)
		if err != nil {
			return err
		}
		keep := *q
		set(q)
		q.ID, q.Status, q.Reason, q.Counts, q.Running, q.Queued = id, keep.Status, keep.Reason, keep.Counts, keep.Running, keep.Queued
		return nil
	})
}

// PlantNode creates a node of quest in n's status with n's fields (the id,
// order, lock sequence and times are the engine's), linked from n.Parent
// by relation rel when both are set, and returns it as stored. A terminal
// node is locked with a ledger record of n.Outcome ("PLANTED" if empty).
func (e *Engine) PlantNode(quest string, n Node, rel string) (*Node, error) {
	if err := e.writable(); err != nil {
		return nil, err
	}
	if !n.Status.Valid() {
		return nil, fmt.Errorf("plant node: status %q: %w", n.Status, ErrInvalid)
	}
	var out *Node
	err := e.update(func(t *txn) error {
		q, err := t.Quest(quest)
		if err != nil {
			return err
		}
		var parent *Node
		if n.Parent != "" {
			if parent, err = t.Node(n.Parent); err != nil {
				return err
			}
		}
		made, dup, err := t.NewNodeWith(q, parent, n.Role, n.Hypothesis, Pending, rel, func(made *Node) {
			keep := *made
			*made = n
			made.ID, made.Quest, made.Order, made.Created = keep.ID, keep.Quest, keep.Order, keep.Created
			made.Parent, made.Depth, made.Status = keep.Parent, keep.Depth, Pending
			// The copy's log is its own chain: the planted attempts,
			// which saveNode appends (chainForm), never n's records.
			made.Runs, made.Attempts = slices.Clone(n.Runs), slices.Clone(n.Attempts)
			made.AttemptCount, made.AttemptSeq, made.AttemptSum, made.LastAttempt, made.Sittings, made.Spill = 0, 0, "", nil, 0, nil
			made.LockSeq, made.HeadOnly = 0, false
		})
		if err != nil {
			return err
		}
		if dup {
			return fmt.Errorf("plant node: quest %s has the hypothesis %q already (%s): %w", quest, n.Hypothesis, made.ID, ErrInvalid)
		}
		out = made
		return t.place(q, made, n.Status)
	})
	return out, err
}

// place moves n (pending, just created) to status to as move would,
// without the ratchet's table.
func (t *txn) place(q *Quest, n *Node, to Status) error {
	if to == Pending {
		return t.SaveNode(n)
	}
	key := u64(n.Order)
	if err := t.leaveIndexes(q, n, Pending, to, key); err != nil {
		return err
	}
	if err := t.enterIndexes(q, n, Pending, to, key); err != nil {
		return err
	}
	trackQueued(q, n, to)
	q.Counts.Dec(Pending)
	q.Counts.Inc(to)
	n.Status = to
	if err := t.SaveNode(n); err != nil {
		return err
	}
	if err := t.Emit(domain.NodeEvent(q, n, Pending, to, "planted")); err != nil {
		return err
	}
	if !to.Terminal() {
		return nil
	}
	outcome := n.Outcome
	if outcome == "" {
		outcome = "PLANTED"
	}
	return t.Ledger(n, outcome, n.Facts)
}

// PlantEdge adds the edge from -> to of relation rel to quest.
func (e *Engine) PlantEdge(quest, from, to, rel string) error {
	if err := e.writable(); err != nil {
		return err
	}
	return e.update(func(t *txn) error {
		q, err := t.Quest(quest)
		if err != nil {
			return err
		}
		return t.Edge(q, from, to, rel)
	})
}
