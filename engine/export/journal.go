package export

import (
	"encoding/json"
	"fmt"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/ledger"
	"github.com/questbox/questbox/engine/store"
)

// Store is what an export asks of the engine's store: whether it may
// write now, a read transaction, and a write transaction the engine
// commits as its own (so that what it caches of the quests learns the
// commit). It is the engine's; Begin, Ack and Abort call it from the
// caller's goroutine.
type Store interface {
	Writable() error
	View(fn func(tx *store.Tx) error) error
	Update(fn func(tx *store.Tx) error) error
}

func readState(s Store, quest string) (State, error) {
	var st State
	err := s.View(func(tx *store.Tx) (err error) {
		st, err = ReadState(tx, quest)
		return err
	})
	return st, err
}

func putState(s Store, quest string, st State) error {
	if err := s.Writable(); err != nil {
		return err
	}
	return s.Update(func(tx *store.Tx) error { return PutState(tx, quest, st) })
}

// readBatch returns the terminal nodes locked after cursor, in lock
// order, the stage nodes of the Teams among them, and the ledger's head
// as the same transaction read it (ReadBatch).
func readBatch(s Store, quest string, cursor uint64) ([]*domain.Node, map[string][]*domain.Node, uint64, ledger.Head, error) {
	var out []*domain.Node
	var stages map[string][]*domain.Node
	var head ledger.Head
	upto := cursor
	err := s.View(func(tx *store.Tx) (err error) {
		out, stages, upto, head, err = ReadBatch(tx, quest, cursor)
		return err
	})
	return out, stages, upto, head, err
}

// Batch is what an export has not acknowledged yet: the quest's
// terminal nodes locked after its cursor, in lock order. The cursor moves
// only when the client acknowledges the batch ([Ack]), after it has the
// lines durably; an unacknowledged batch is sent again.
type Batch struct {
	Quest string
	// From and Upto are lock seqs: the batch covers (From, Upto]. An empty
	// batch has From == Upto.
	From, Upto uint64
	Nodes      []*domain.Node
	// Stages are the stage nodes of the Teams among Nodes, by Team id, oldest
	// first (docs/design.md, "Councils and Teams"): a Team's export lists
	// them.
	Stages map[string][]*domain.Node
	// File and Offset journal a file export: the client cuts File to
	// Offset, appends the lines, syncs, then acknowledges. If it dies
	// before acknowledging, the next export to File is told the same
	// Offset, so the file never holds a line twice.
	File   string
	Offset int64
	// head is the ledger's head when the batch was read (Head).
	head ledger.Head
}

// Head is the ledger's head when the batch was read, which the engine
// signs with the batch (Engine.SealExport).
func (b Batch) Head() ledger.Head { return b.head }

// Begin returns the batch an export of quest should write (Engine.ExportBegin).
//
// With file == "" (stdout) nothing is written to the store: the batch is
// sent again until acknowledged, so a client that dies between writing and
// acknowledging repeats those lines (at least once). With a file — an
// absolute path the client writes, whose current size is size — the batch
// is journaled with the offset it starts at (exactly once): an earlier
// unacknowledged batch to the same file keeps its offset, so the client
// cuts the file back before appending. A journal for another file (an
// export interrupted there) must be finished or aborted first: that is a
// domain.ErrBusy naming it.
func Begin(s Store, quest, file string, size int64) (Batch, error) {
	if size < 0 {
		return Batch{}, fmt.Errorf("export %s: file size %d: %w", quest, size, domain.ErrInvalid)
	}
	if err := s.Writable(); err != nil && file != "" {
		return Batch{}, err // a file export journals its batch
	}
	st, err := readState(s, quest)
	if err != nil {
		return Batch{}, err
	}
	if p := st.Pending; p != nil && p.File != file {
		return Batch{}, fmt.Errorf("export %s: an interrupted export to %s must be finished first (run `questbox export %s --out %s`): %w",
			quest, p.File, quest, p.File, domain.ErrBusy)
	}
	nodes, stages, upto, head, err := readBatch(s, quest, st.Cursor)
	if err != nil {
		return Batch{}, err
	}
	b := Batch{Quest: quest, From: st.Cursor, Upto: upto, Nodes: nodes, Stages: stages, File: file, Offset: size, head: head}
	if file == "" {
		return b, nil
	}
	if p := st.Pending; p != nil {
		b.Offset = p.Offset
	}
	if len(nodes) == 0 && st.Pending == nil {
		return b, nil // nothing to write: no journal, no commit
	}
	st.Pending = &Pending{File: file, Offset: b.Offset, Upto: upto}
	return b, putState(s, quest, st)
}

// Ack acknowledges the batch (from, upto] of quest: the client has
// its lines durably. The cursor moves to upto and a file journal is
// cleared. Acknowledging a batch again is a no-op; acknowledging one that
// no longer starts at the cursor (another export moved it), or not the one
// a file export journaled last, is domain.ErrBusy.
func Ack(s Store, quest string, from, upto uint64) error {
	if upto < from {
		return fmt.Errorf("export %s: batch (%d, %d]: %w", quest, from, upto, domain.ErrInvalid)
	}
	if err := s.Writable(); err != nil {
		return err
	}
	st, err := readState(s, quest)
	if err != nil {
		return err
	}
	switch {
	case st.Cursor == upto && st.Pending == nil:
		return nil
	case st.Cursor != from, st.Pending != nil && st.Pending.Upto != upto:
		return fmt.Errorf("export %s: the batch (%d, %d] is stale: another export moved the cursor to %d; export again: %w",
			quest, from, upto, st.Cursor, domain.ErrBusy)
	}
	st.Cursor, st.Pending = upto, nil
	return putState(s, quest, st)
}

// Abort drops the journal of an export to file that the client could
// not write (it has cut the file back to the journaled offset): the cursor
// stays, and the next export may go anywhere.
func Abort(s Store, quest, file string) error {
	if err := s.Writable(); err != nil {
		return err
	}
	st, err := readState(s, quest)
	if err != nil {
		return err
	}
	if st.Pending == nil || st.Pending.File != file {
		return nil
	}
	st.Pending = nil
	return putState(s, quest, st)
}

// LockSeq is the highest lock sequence an export's state v has counted
// (its cursor, or the export it has pending).
func LockSeq(v []byte) (uint64, bool) {
	var st State
	if json.Unmarshal(v, &st) != nil {
		return 0, false
	}
	seq := st.Cursor
	if st.Pending != nil {
		seq = max(seq, st.Pending.Upto)
	}
	return seq, true
}
