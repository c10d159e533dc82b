// Package records is how the domain's records are written and read, and
// what is derived from them again: the forms of the quest, node, run and
// event records on top of the store's file format (engine/store). It sits
// below the engine and above engine/store and engine/domain: the engine's
// rules call its typed functions with a transaction's handles and never
// see a record's bytes (see docs/design.md, "The store and its
// durability" and "Layers and dependencies").
//
// The quest record's binary codec (questcodec.go); the fast read of a
// node record's head (headscan.go); the hand-written JSON of the records a
// dispatch writes most, its run and its events (jsonfast.go); the outbox's event-group records
// (eventgroup.go; docs/design.md, "Events and the outbox"); the running
// entry's compact form (runningentry.go); the node record and its attempt
// log, a chain of records out of the node's, with its check and its
// migration (attemptlog.go); the reads of a node and of a run with the
// running index laid over them, and the index's migration to the dispatch
// layout (read.go); and what a salvage derives again from the
// records it copied (Rebuild, repair.go), with the engine's rules (Rules),
// which records it keeps because they decode (RecordDecodes, decodes.go),
// and how it recognises them on pages it cannot reach (Probes, probes.go).
//
// Reads are zero-copy where the engine's were: what a function returns
// that points into a transaction's bytes is valid for that transaction
// only, as store's handles are.
package records
