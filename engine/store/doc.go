// Package store is questbox's storage: the bbolt file on the SD card, its
// layout (the buckets and keys, layout.go), the checks that read the file
// page by page before bbolt maps it (check.go, through
// engine/internal/boltfile), compaction at open (compact.go), the
// schema's forward migrations, and salvage's reading of a damaged file
// (salvage.go). It knows the file format and nothing of the domain: the
// engine above it says what its records are (Schema, Records), and a
// domain rule and the file format change apart.
//
// A DB is opened with Open, which checks the file, takes its lock
// (exclusive for a writer, shared for a read-only open), migrates an older
// schema forward with the domain's migrations, and compacts a file with
// many free pages. Update and View are closure transactions; a fault while
// bbolt reads a damaged page is ErrCorrupt, never a crash. The errors are
// documented sentinels (errors.go), which package engine re-exports.
package store
