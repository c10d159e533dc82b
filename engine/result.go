package engine

import (
	"fmt"

	"github.com/questbox/questbox/engine/findings"
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
)

// A quest's result is package engine/findings' (docs/results.md); the
// engine reads the quest's locked nodes for it.

// Result reads what quest found: its locked nodes, in one read
// transaction. It reads every locked node of the quest once (a person
// asks for it; the tick never does).
func (e *Engine) Result(quest string) (*Result, error) {
	var r *Result
	err := e.store.view(func(tx *store.Tx) error {
		q, ok, err := getQuest(tx, quest)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("quest %s: %w", quest, ErrNotFound)
		}
		locked, err := lockedNodes(tx, q.ID)
		if err != nil {
			return err
		}
		r = findings.Of(q, locked)
		return nil
	})
	if err != nil {
		return nil, err
	}
	e.liveWall(r.Quest)
	return r, nil
}

// lockedNodes reads quest's locked nodes from its locked index, in lock
// order.
func lockedNodes(tx *store.Tx, quest string) ([]*Node, error) {
	b := subRO(tx, bLocked, quest)
	if b == nil {
		return nil, nil
	}
	var out []*Node
	err := b.ForEach(func(_, id []byte) error {
		n, err := records.ReadNode(tx, string(id))
		if err != nil {
			return err
		}
		out = append(out, n)
		return nil
	})
	return out, err
}
