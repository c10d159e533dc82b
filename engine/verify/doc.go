// Package verify is the check of a whole store ([Check]): its pages,
// then, on the same snapshot, the verdict ledger's chain against the
// locked nodes (their status, claim hash and stored bytes), every index
// against the records (the per-quest node indexes, the running index, the
// locked and the evidence index), the outbox's and the attempt logs'
// records, each quest's counts against its nodes, and the head's
// signature. It names every problem found and tells store damage, which
// salvage repairs, from a rewrite the ledger proves.
//
// It also holds the migration to schema 2, which binds every locked node
// into the ledger by the hash of its record ([SealLedger]) after checking
// the ledger under the old rules.
//
// It reads the records through engine/store's handles and engine/records'
// forms, and what it must read as the engine does (a quest's counts with
// its running entries laid over them, which nodes' evidence the owner is
// shown) it asks of the engine through [Rules]. See docs/design.md, "The
// store and its durability" and "The signed ledger".
package verify
