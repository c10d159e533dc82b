// Package domain is questbox's vocabulary: quests, nodes, edges, runs,
// attempts and claims; the node statuses and the ratchet's table of legal
// moves ([Status.CanMove]); a quest's roles, stages, phases, levels and
// limits; the events the engine emits and the consent requests it keeps;
// and the errors the engine returns to its callers.
//
// Fields tagged record:"-" are what the engine keeps of a record while it
// holds it (a node read for its dispatch only, the attempts it has yet to
// write); no record ever holds them.
//
// It holds no rule that needs the store or the clock: what may happen to
// a quest is package engine's, how a record is written is engine/store's.
// The rules' packages and the faces share these types, so that a node is
// one type from the store to the dashboard (docs/design.md, "Layers and
// dependencies").
package domain
