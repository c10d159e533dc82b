// Package followup holds which quests have follow-up work a commit enabled
// (a Team's next stage or its revision, a council's members or its merge,
// a phase gate's council, a retry after a FAIL) and when a pass for them
// is due (docs/design.md, "When work is dispatched"): the notes a
// committed write hands over, the order the quests were first noted in,
// the one coalesced wake-up of Serve's goroutine, and the quests a pass
// found no free slot for, kept until a run leaves its slot.
//
// It decides nothing of what a pass dispatches: package engine makes the
// passes, through the tick's own code, and reaches nothing here but the
// [Chain]; the chain reaches the engine only through [Engine], declared
// here.
package followup
