// Package verdict applies a judged answer to its node: the rules that move
// a node by its verdict (a FAIL uses a try, a REVIEW asks a human, a PASS
// locks it by the agent's verdict), the consequences of a pass in solo and
// team modes (docs/design.md, "Solo and team modes"), an owner's actions
// and spawns, and the no_progress signals of loop control (docs/design.md,
// "Loop control").
//
// The engine judges an answer outside any transaction (it may wait on the
// network) and hands the result, a [Judged], to these rules inside one,
// through the [Txn] interface: the ratchet's moves, the records and the
// events are the engine's, and the Teams' and councils' rules a verdict
// leads to are reached through it too.
package verdict
