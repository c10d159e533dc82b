package domain

import (
	"errors"

	"github.com/questbox/questbox/engine/store"
)

// Every error value the engine returns to its callers is declared here, documented as
// "… is returned when …": ui/api's error table has a row for each (its
// test reads this file), so a new one here needs its HTTP status and exit
// code decided there.
var (
	// ErrLocked is returned when a change is asked of a terminal node: the
	// ratchet never gives back what was locked.
	ErrLocked = errors.New("node is locked")
	// ErrIllegalMove is returned when a status change is not an edge of the
	// status machine (docs/design.md, "The ratchet"), or a quest's status
	// cannot make it: stop of a quest that is not active, resume of one that
	// is not stopped.
	ErrIllegalMove = errors.New("illegal status change")
	// ErrNotFound is returned when a quest or node does not exist.
	ErrNotFound = errors.New("not found")
	// ErrInUse is returned when another process holds the store's lock.
	ErrInUse = store.ErrInUse
	// ErrCorrupt is returned when the store file fails its integrity check.
	ErrCorrupt = store.ErrCorrupt
	// ErrSchema is returned when the store was written by a newer questbox.
	ErrSchema = store.ErrSchema
	// ErrStoreFailed is returned when the store cannot be written or read:
	// a full disk, an I/O error, permission denied, a read-only file
	// system. Nothing of the failed transaction was committed; the store
	// on disk is as it was before it. Clients report it as "store
	// unavailable" (exit code 2).
	ErrStoreFailed = store.ErrStoreFailed
	// ErrNoStore is returned when a read-only open finds no store in its
	// data directory (a read creates none); it also wraps fs.ErrNotExist.
	ErrNoStore = store.ErrNoStore
	// ErrReadOnly is returned when a write is asked of a store or an engine
	// opened read-only, and when a read-only open finds a store that needs
	// a write first (an upgrade to this questbox's schema).
	ErrReadOnly = store.ErrReadOnly
	// ErrBackupRefused is returned by Restore when the backup does not
	// verify (it also wraps why: ErrCorrupt, ErrLedgerBroken, ErrSchema);
	// nothing was changed.
	ErrBackupRefused = store.ErrBackupRefused
	// ErrInvalid is returned when an argument is malformed (empty direction,
	// unknown mode, unknown provider, ...).
	ErrInvalid = errors.New("invalid input")
	// ErrBusy is returned when a node cannot take a submission now, e.g. it
	// is running under a spawned provider.
	ErrBusy = errors.New("node is busy")
	// ErrStaleConsent is returned when a consent names a claim hash other
	// than the node's current one: the claim changed after it was shown, so
	// the consent is void.
	ErrStaleConsent = errors.New("consent is void: the claim changed after it was shown")
	// ErrLedgerBroken is returned by Verify when the chain or a locked node
	// does not match what was recorded.
	ErrLedgerBroken = errors.New("verdict ledger is broken")
	// ErrDeviceKey is returned when the box's device key, which signs the
	// ledger's head, cannot be read or made, or is not an ed25519 key of
	// the owner's alone: questbox never replaces it.
	ErrDeviceKey = errors.New("device key unusable")
	// ErrEventsPruned is returned to a subscriber that asked for events older
	// than the outbox still holds.
	ErrEventsPruned = errors.New("events were pruned")
)
