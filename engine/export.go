package engine

import (
	"fmt"

	"github.com/questbox/questbox/engine/ledger"
	"github.com/questbox/questbox/engine/store"
)

// exportState is a quest's export cursor. Pending journals a file export
// in progress: the file's size before it and the lock seq it covers up to.
type exportState struct {
	Cursor  uint64         `json:"cursor"`
	Pending *exportPending `json:"pending,omitempty"`
}

type exportPending struct {
	File   string `json:"file"`
	Offset int64  `json:"offset"`
	Upto   uint64 `json:"upto"`
}

func (e *Engine) exportState(quest string) (exportState, error) {
	var st exportState
	err := e.store.view(func(tx *store.Tx) error {
		if tx.Quests().Get([]byte(quest)) == nil {
			return fmt.Errorf("quest %s: %w", quest, ErrNotFound)
		}
		_, err := getJSON(tx.Exports(), []byte(quest), &st)
		return err
	})
	return st, err
}

func (e *Engine) putExportState(quest string, st exportState) error {
	if err := e.writable(); err != nil {
		return err
	}
	// An engine write, so that the tick's quest cache learns its commit
	// and stays current (questcache.go).
	return e.update(func(t *txn) error { return putJSON(t.tx.Exports(), []byte(quest), st) })
}

// exportBatch returns the terminal nodes locked after cursor, in lock
// order, the stage nodes of the Teams among them, and the ledger's head
// as the same transaction read it.
func (e *Engine) exportBatch(quest string, cursor uint64) ([]*Node, map[string][]*Node, uint64, ledger.Head, error) {
	var out []*Node
	var stages map[string][]*Node
	var head ledger.Head
	upto := cursor
	err := e.store.view(func(tx *store.Tx) error {
		head = ledger.ReadHead(tx)
		b := subRO(tx, bLocked, quest)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for k, v := c.Seek(u64(cursor + 1)); k != nil; k, v = c.Next() {
			n, err := readNodeLog(tx, string(v))
			if err != nil {
				return err
			}
			n.Claim = nil
			out = append(out, n)
			upto = seqOf(k)
		}
		var err error
		stages, err = teamStages(tx, quest, out)
		return err
	})
	return out, stages, upto, head, err
}

// teamStages returns the stage nodes of each Team among nodes, by Team id,
// in creation order: one pass over the quest's nodes, only when there is a
// Team to export.
func teamStages(tx *store.Tx, quest string, nodes []*Node) (map[string][]*Node, error) {
	teams := map[string]bool{}
	for _, n := range nodes {
		if n.TeamKind != "" {
			teams[n.ID] = true
		}
	}
	if len(teams) == 0 {
		return nil, nil
	}
	b := subRO(tx, bQNodes, quest)
	if b == nil {
		return nil, nil
	}
	out := map[string][]*Node{}
	err := b.ForEach(func(_, id []byte) error {
		n, err := readNodeLog(tx, string(id))
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

// ExportBatch is what an export has not acknowledged yet: the quest's
// terminal nodes locked after its cursor, in lock order. The cursor moves
// only when the client acknowledges the batch (ExportAck), after it has
// the lines durably; an unacknowledged batch is sent again.
type ExportBatch struct {
	Quest string
	// From and Upto are lock seqs: the batch covers (From, Upto]. An empty
	// batch has From == Upto.
	From, Upto uint64
	Nodes      []*Node
	// Stages are the stage nodes of the Teams among Nodes, by Team id, oldest
	// first (docs/design.md, "Councils and Teams"): a Team's export lists
	// them.
	Stages map[string][]*Node
	// File and Offset journal a file export: the client cuts File to
	// Offset, appends the lines, syncs, then acknowledges. If it dies
	// before acknowledging, the next export to File is told the same
	// Offset, so the file never holds a line twice.
	File   string
	Offset int64
	// head is the ledger's head when the batch was read (SealExport).
	head ledger.Head
}

// ExportBegin returns the batch an export of quest should write.
//
// With file == "" (stdout) nothing is written to the store: the batch is
// sent again until acknowledged, so a client that dies between writing and
// acknowledging repeats those lines (at least once). With a file — an
// absolute path the client writes, whose current size is size — the batch
// is journaled with the offset it starts at (exactly once): an earlier
// unacknowledged batch to the same file keeps its offset, so the client
// cuts the file back before appending. A journal for another file (an
// export interrupted there) must be finished or aborted first: that is an
// ErrBusy naming it.
func (e *Engine) ExportBegin(quest, file string, size int64) (ExportBatch, error) {
	if size < 0 {
		return ExportBatch{}, fmt.Errorf("export %s: file size %d: %w", quest, size, ErrInvalid)
	}
	if err := e.writable(); err != nil && file != "" {
		return ExportBatch{}, err // a file export journals its batch
	}
	st, err := e.exportState(quest)
	if err != nil {
		return ExportBatch{}, err
	}
	if p := st.Pending; p != nil && p.File != file {
		return ExportBatch{}, fmt.Errorf("export %s: an interrupted export to %s must be finished first (run `questbox export %s --out %s`): %w",
			quest, p.File, quest, p.File, ErrBusy)
	}
	nodes, stages, upto, head, err := e.exportBatch(quest, st.Cursor)
	if err != nil {
		return ExportBatch{}, err
	}
	b := ExportBatch{Quest: quest, From: st.Cursor, Upto: upto, Nodes: nodes, Stages: stages, File: file, Offset: size, head: head}
	if file == "" {
		return b, nil
	}
	if p := st.Pending; p != nil {
		b.Offset = p.Offset
	}
	if len(nodes) == 0 && st.Pending == nil {
		return b, nil // nothing to write: no journal, no commit
	}
	st.Pending = &exportPending{File: file, Offset: b.Offset, Upto: upto}
	return b, e.putExportState(quest, st)
}

// ExportAck acknowledges the batch (from, upto] of quest: the client has
// its lines durably. The cursor moves to upto and a file journal is
// cleared. Acknowledging a batch again is a no-op; acknowledging one that
// no longer starts at the cursor (another export moved it), or not the one
// a file export journaled last, is ErrBusy.
func (e *Engine) ExportAck(quest string, from, upto uint64) error {
	if upto < from {
		return fmt.Errorf("export %s: batch (%d, %d]: %w", quest, from, upto, ErrInvalid)
	}
	if err := e.writable(); err != nil {
		return err
	}
	st, err := e.exportState(quest)
	if err != nil {
		return err
	}
	switch {
	case st.Cursor == upto && st.Pending == nil:
		return nil
	case st.Cursor != from, st.Pending != nil && st.Pending.Upto != upto:
		return fmt.Errorf("export %s: the batch (%d, %d] is stale: another export moved the cursor to %d; export again: %w",
			quest, from, upto, st.Cursor, ErrBusy)
	}
	st.Cursor, st.Pending = upto, nil
	return e.putExportState(quest, st)
}

// ExportAbort drops the journal of an export to file that the client could
// not write (it has cut the file back to the journaled offset): the cursor
// stays, and the next export may go anywhere.
func (e *Engine) ExportAbort(quest, file string) error {
	if err := e.writable(); err != nil {
		return err
	}
	st, err := e.exportState(quest)
	if err != nil {
		return err
	}
	if st.Pending == nil || st.Pending.File != file {
		return nil
	}
	st.Pending = nil
	return e.putExportState(quest, st)
}
