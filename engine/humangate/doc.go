// Package humangate holds the rules of the consent queue, the L3 gate
// where a human decides (docs/design.md, "Authority", "The consent
// button"): what a node awaiting consent offers the human (its request),
// what a grant and a rejection do to it, when a request expires and what
// expiry does, and a new quest's egress consent, which holds the quest
// until a human lets its material leave the box (docs/design.md, "Privacy
// egress").
//
// A human's consent itself, bound to the claim hash that was shown, is
// package gates/consent's; this package applies it. The rules run inside
// one engine transaction, which they reach through [Txn]; package engine
// calls them and never the reverse.
package humangate
