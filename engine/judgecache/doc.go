// Package judgecache is the store's L2 judge cache (docs/design.md,
// "Judge discipline"): decided verdicts of the AI judge keyed by claim
// hash, evidence hash and judge fingerprint ([Cache], a judge.Cache). A
// judgement is queued in the engine's group commit and held in memory
// until that commit is decided, so that a lookup meanwhile finds it.
//
// It reads and writes the store's judge bucket through the engine's
// [Store], which opens the transactions and runs the group commit; it
// knows nothing of the quests.
package judgecache
