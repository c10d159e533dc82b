// Package council holds the rules of councils and phase gates: how an
// owner's design phase seats a council of reviewers and judges (one member
// node per seat, each with its own provider), how the engine merges their
// answers by rule into the owner's decision, what a member's prompt
// contract says and how a council's make-up is read and checked
// (docs/design.md, "Councils"); and when a phase gate sits, what holds the
// next phase's nodes until it passes, and what a gate's decision does
// (docs/design.md, "Phase gates"); and how the tick reads a sitting
// council's owner and members, from the records or from the engine's
// memory of the sittings ([Sittings], [TickSitting]).
//
// It sits below package engine: the rules reach one engine transaction
// through [Txn], a sitting's reads through [SittingReader] and the tick's
// turn through [Round], all declared here, and never import the engine.
package council
