package export

import (
	"fmt"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/ledger"
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
)

// State is a quest's export cursor. Pending journals a file export
// in progress: the file's size before it and the lock seq it covers up to.
type State struct {
	Cursor  uint64   `json:"cursor"`
	Pending *Pending `json:"pending,omitempty"`
}

// Pending is a file export in progress (State.Pending).
type Pending struct {
	File   string `json:"file"`
	Offset int64  `json:"offset"`
	Upto   uint64 `json:"upto"`
}

// ReadState returns quest's export state in tx: the zero State if it
// has never been exported, domain.ErrNotFound if there is no such quest.
func ReadState(tx *store.Tx, quest string) (State, error) {
	var st State
	if tx.Quests().Get([]byte(quest)) == nil {
		return st, fmt.Errorf("quest %s: %w", quest, domain.ErrNotFound)
	}
	_, err := store.GetJSON(tx.Exports(), []byte(quest), &st)
	return st, err
}

// PutState writes quest's export state in tx.
func PutState(tx *store.Tx, quest string, st State) error {
	return store.PutJSON(tx.Exports(), []byte(quest), st)
}

// ReadBatch returns the terminal nodes locked after cursor, in lock
// order, the stage nodes of the Teams among them, and the ledger's head
// as the same transaction read it.
func ReadBatch(tx *store.Tx, quest string, cursor uint64) ([]*domain.Node, map[string][]*domain.Node, uint64, ledger.Head, error) {
	var out []*domain.Node
	upto := cursor
	head := ledger.ReadHead(tx)
	b := store.SubRO(tx, store.Locked, quest)
	if b == nil {
		return out, nil, upto, head, nil
	}
	c := b.Cursor()
	for k, v := c.Seek(store.U64(cursor + 1)); k != nil; k, v = c.Next() {
		n, err := records.ReadNodeLog(tx, string(v))
		if err != nil {
			return out, nil, upto, head, err
		}
		n.Claim = nil
		out = append(out, n)
		upto = store.SeqOf(k)
	}
	stages, err := teamStages(tx, quest, out)
	return out, stages, upto, head, err
}

// teamStages returns the stage nodes of each Team among nodes, by Team id,
// in creation order: one pass over the quest's nodes, only when there is a
// Team to export.
func teamStages(tx *store.Tx, quest string, nodes []*domain.Node) (map[string][]*domain.Node, error) {
	teams := map[string]bool{}
	for _, n := range nodes {
		if n.TeamKind != "" {
			teams[n.ID] = true
		}
	}
	if len(teams) == 0 {
		return nil, nil
	}
	b := store.SubRO(tx, store.QNodes, quest)
	if b == nil {
		return nil, nil
	}
	out := map[string][]*domain.Node{}
	err := b.ForEach(func(_, id []byte) error {
		n, err := records.ReadNodeLog(tx, string(id))
		if err != nil {
			return err
		}
		if teams[n.Team] {
			n.Claim = nil
			out[n.Team] = append(out[n.Team], n)
		}
		return nil
	})
	return out, err
}
