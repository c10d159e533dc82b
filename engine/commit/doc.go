// Package commit is the store handle the engine writes through: one open
// store file (engine/store) with its group commit, which gathers the
// writes that arrive together into one transaction and one fsync and
// returns to each writer once its write is durable (docs/design.md, "The
// store and its durability"), the signature of the verdict ledger's head
// with the box's device key at every commit that moves it (engine/ledger;
// docs/design.md, "The signed ledger"), and the release of the mapped
// file's pages once the store goes quiet (docs/design.md, "Memory on a
// small box").
//
// It knows the file and the ledger's signature, not the domain's records:
// the schema (with the migrations the engine's rules do) and the event
// group the writes of one transaction share are the engine's, handed to
// Open.
package commit
