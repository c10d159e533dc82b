package engine

import (
	"github.com/questbox/questbox/engine/export"
	"github.com/questbox/questbox/engine/store"
)

// ExportBatch is what an export has not acknowledged yet (export.Batch).
type ExportBatch = export.Batch

// exportStore is the engine's store as an export reads and journals it
// (export.Store).
type exportStore struct{ e *Engine }

var _ export.Store = exportStore{}

func (s exportStore) Writable() error                        { return s.e.writable() }
func (s exportStore) View(fn func(tx *store.Tx) error) error { return s.e.store.view(fn) }

// Update is an engine write, so that the tick's quest cache learns its
// commit and stays current (engine/tickmem).
func (s exportStore) Update(fn func(tx *store.Tx) error) error {
	return s.e.update(func(t *txn) error { return fn(t.tx) })
}

// ExportBegin returns the batch an export of quest should write
// (export.Begin): with file == "" (stdout) nothing is written to the
// store; with a file, whose current size is size, the batch is journaled
// with the offset it starts at.
func (e *Engine) ExportBegin(quest, file string, size int64) (ExportBatch, error) {
	return export.Begin(exportStore{e}, quest, file, size)
}

// ExportAck acknowledges the batch (from, upto] of quest: the client has
// its lines durably (export.Ack).
func (e *Engine) ExportAck(quest string, from, upto uint64) error {
	return export.Ack(exportStore{e}, quest, from, upto)
}

// ExportAbort drops the journal of an export to file that the client could
// not write (export.Abort).
func (e *Engine) ExportAbort(quest, file string) error {
	return export.Abort(exportStore{e}, quest, file)
}
