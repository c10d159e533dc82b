// Package store is questbox's storage: the bbolt file on the SD card, its
// layout (the buckets and keys, layout.go), the checks that read the file
// page by page before bbolt maps it (check.go, through
// engine/internal/boltfile), compaction at open (compact.go), the
// schema's forward migrations, salvage's reading of a damaged file
// (salvage.go) and the store's part of its repair (repair.go). It knows
// the file format and nothing of the domain: the engine above it says
// what its records are (Schema, Records), and a domain rule and the file
// format change apart.
//
// It is the only package that imports bbolt. The domain reads and writes
// through a transaction's handles (Tx, tx.go): each top-level bucket by
// name (tx.Nodes(), tx.Running(), tx.Events() ...), their cursors, and the
// bytes they return, zero-copy and valid for the transaction only. Every
// record format is here: the quest codec (codec.go), and the hand-written
// binary records on one set of writers (binary.go): the running entries
// (running.go), the outbox's event groups (eventgroup.go) and the attempt
// log (attemptlog.go).
//
// A DB is opened with Open, which checks the file, takes its lock
// (exclusive for a writer, shared for a read-only open), migrates an older
// schema forward with the domain's migrations, and compacts a file with
// many free pages. Update and View are closure transactions; a fault while
// bbolt reads a damaged page is ErrCorrupt, never a crash. The errors are
// documented sentinels (errors.go), which package engine re-exports.
package store
