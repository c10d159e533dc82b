// Package ledger is the verdict ledger's own rules: the hash-chained
// record of every verdict and how one is appended ([Append]); reading the
// chain back and finding what was rewritten, removed or recorded lost by
// a salvage ([ReadChain]); the box's device key, the signature of the
// ledger's head and what a signature says of it ([CheckSeal]); and the
// device key's word on an export batch, which a third party checks
// offline ([ExportSeal.Check]); and what a salvage records of the
// ledger records and locked nodes it lost, with the head it sets again
// ([RecordLoss], loss.go).
//
// It reads and writes the ledger's bucket and the meta bucket's head and
// signature through engine/store's handles and knows nothing of the
// quests' other records: the check of the locked nodes against the chain
// is engine/verify's Check. See docs/design.md, "The store and its
// durability" and "The signed ledger", and docs/ledger.md.
package ledger
