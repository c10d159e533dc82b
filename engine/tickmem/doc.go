// Package tickmem is the tick's memory of what committed: the active
// quests' records as committed and the Quests they decode to (QuestCache),
// each active quest's first pending node (PendingView), its owner rounds
// (OwnerRounds), and the slabs a tick carves its quests, node heads and
// run lists from, reused from tick to tick (Slabs). Each memory learns
// only what a commit made true and is used only while the store still
// says so, so a tick that takes from it reads what it would have read
// from the store, at a fraction of the cost (docs/design.md, "The tick"
// and "Memory on a small box").
//
// It sits below package engine, which hands it what its transactions
// committed; it knows the domain's types and the store's transactions,
// never the engine.
package tickmem
