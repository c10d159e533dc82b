package engine

import (
	"fmt"

	"github.com/questbox/questbox/engine/export"
	"github.com/questbox/questbox/engine/ledger"
	"github.com/questbox/questbox/engine/store"
)

// exportState is a quest's export cursor (export.State).
type exportState = export.State

func (e *Engine) exportState(quest string) (exportState, error) {
	var st exportState
	err := e.store.view(func(tx *store.Tx) (err error) {
		st, err = export.ReadState(tx, quest)
		return err
	})
	return st, err
}

func (e *Engine) putExportState(quest string, st exportState) error {
	if err := e.writable(); err != nil {
		return err
	}
	// An engine write, so that the tick's quest cache learns its commit
	// and stays current (engine/tickmem).
	return e.update(func(t *txn) error { return export.PutState(t.tx, quest, st) })
}

// exportBatch returns the terminal nodes locked after cursor, in lock
// order, the stage nodes of the Teams among them, and the ledger's head
// as the same transaction read it (export.Batch).
func (e *Engine) exportBatch(quest string, cursor uint64) ([]*Node, map[string][]*Node, uint64, ledger.Head, error) {
	var out []*Node
	var stages map[string][]*Node
	var head ledger.Head
	upto := cursor
	err := e.store.view(func(tx *store.Tx) (err error) {
		out, stages, upto, head, err = export.Batch(tx, quest, cursor)
		return err
	})
	return out, stages, upto, head, err
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
	st.Pending = &export.Pending{File: file, Offset: b.Offset, Upto: upto}
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
