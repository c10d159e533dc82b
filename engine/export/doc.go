// Package export is what an export of a quest's findings reads and keeps
// in the store: each quest's export state, the cursor of the lock
// sequence it has acknowledged and the file export it has journaled
// ([State]), and the batch an export sends, the nodes locked after the
// cursor with the stage nodes of the Teams among them and the ledger's
// head read in the same transaction ([ReadBatch]), which the engine signs;
// and when a batch is sent, journaled for a file, acknowledged or
// abandoned ([Begin], [Ack], [Abort]), the [Batch] an export writes.
//
// It reads and writes through one of the store's transactions, which the
// engine opens; Begin, Ack and Abort reach the engine's store through
// [Store]. See docs/design.md, "The signed ledger" and "Councils and
// Teams".
package export
