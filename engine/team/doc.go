// Package team holds the rules of Teams (docs/design.md, "Teams"): how a
// Team opens and queues its stages (plan, exec, accept), what a stage that
// is done hands on, how an accepter's rejection becomes a revision and the
// revision cap a blocked Team, the accept modes (judge, or a human's
// consent standing in for the accepter and the L1 review), a Team rejected
// again for the same reason as a stalled step (docs/design.md, "Loop
// control"), the stages' answer contracts and accept criteria, and the
// Teams fields of a quest's spec.
//
// The rules run inside one engine transaction, which they reach through
// [Txn]; package engine calls them and never the reverse.
//
// In a quest with Teams, every node the owner spawns or promotes (and the
// quest's root scout, and each hypothesis Scan seeds) is a Team: a node
// with a TeamKind (its role: scout, poc, strategist or a role of the
// quest's own) that is never dispatched itself. Its work is done by stage nodes, each an ordinary node under the
// ratchet with its own tries, facts, runs and ledger record:
//
//	Team --stages_into--> planner --makes_plan--> executer --executes--> accepter
//	accepter --accepts_to--> Team            (accept, and the deliverable passes L1)
//	accepter --rejects_to--> planner|executer (reject, or the deliverable fails L1)
//
// The Team's own moves (the rows of the ratchet's table that only a Team
// may take, [MoveOK]):
//
//	pending  -> revising      the Team opens and its first planner is queued
//	                          (revising is the status of a Team whose stages
//	                          are at work; its first plan is revision 0)
//	revising -> passed        the accepter accepts and the deliverable passes
//	                          the quest's L1 gate (or a human consents)
//	passed   -> explored | growing | aborted   by the executer's verdict
//	revising -> team_blocked  a rejection past max_revisions (the cap is
//	                          the revisions a Team may make: the N+1th
//	                          rejection of max_revisions N blocks it), or
//	                          a stage exhausted its tries or was aborted;
//	                          terminal, and an owner turn is queued
//	(any non-terminal) -> aborted   and the Team's waiting stage with it
//
// A stage that answers well moves running -> passed -> explored (the stage
// is done and locked; its plan, deliverable or decision is its evidence),
// and the next stage is created pending in the same transaction, so a
// crash between stages loses nothing and runs nothing twice: the quest's
// one-running-node rule dispatches stages one at a time.
//
// Authority stays typed: the accepter is L2. Its accept never locks the
// Team by itself; the Team locks only when the deliverable's L1 outcome,
// recorded on the executer, is PASS. An L1 FAIL sends the executer back
// as a rejection would (it counts as a revision). An L1 REVIEW, or
// AcceptMode human, turns the accept into a button consent on the
// accepter (awaiting_consent, bound to the claim hash); a human who
// rejects it rejects the Team (a revision of its executer).
package team
