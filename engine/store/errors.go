package store

import "errors"

// The store's errors; package engine re-exports each under the same name.
var (
	// ErrInUse is returned when another process holds the store's lock.
	ErrInUse = errors.New("store is in use by another process")
	// ErrCorrupt is returned when the store file fails its integrity check.
	ErrCorrupt = errors.New("store is corrupt")
	// ErrSchema is returned when the store was written by a newer questbox.
	ErrSchema = errors.New("store schema is newer than this questbox")
	// ErrStoreFailed is returned when the store cannot be written or read:
	// a full disk, an I/O error, permission denied, a read-only file
	// system. Nothing of the failed transaction was committed.
	ErrStoreFailed = errors.New("store unavailable")
	// ErrNoStore is returned when a read-only open finds no store file: a
	// read creates nothing, so a directory without a store is an error
	// (the error also wraps fs.ErrNotExist).
	ErrNoStore = errors.New("no store")
	// ErrReadOnly is returned when a write is asked of a store opened
	// read-only, and when a read-only open finds a store that needs a
	// write first (an upgrade to this questbox's schema).
	ErrReadOnly = errors.New("store is open read-only")
	// ErrBackupRefused is returned by Restore when the backup does not
	// verify (corrupt, a broken ledger, a newer questbox's schema); the
	// error also wraps the reason's own sentinel. Nothing was changed.
	ErrBackupRefused = errors.New("backup refused")
	// ErrMigrationContinues is what a migration returns when it has done
	// a bounded part of its work: the part commits (the schema key then
	// names the version after it, and KeyMigrating the unfinished one)
	// and the migration is called again, in a new transaction, until it
	// returns nil. A crash between the parts leaves a store the next
	// writable open resumes; a read-only open refuses it as one that
	// needs an upgrade.
	ErrMigrationContinues = errors.New("migration continues in the next transaction")
)
