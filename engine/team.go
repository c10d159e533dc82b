package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/gates"
)

// Teams (docs/design.md, "Teams").
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
// The Team's own moves (the rows of `moves` that only a Team may take):
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

// DefaultMaxRevisions is how many revisions a Team may make when the
// quest names no cap: the rejection after the last one blocks it.
const DefaultMaxRevisions = 2

// TeamKinds are the team kinds `[teams.KIND]` may configure.
var TeamKinds = []string{RoleScout, RolePOC, RoleStrategist, "custom"}

// stageResult is what judging a stage's answer produced beyond a result.
type stageResult struct {
	plan   string              // planner: the plan
	l1     string              // executer: the L1 outcome of the deliverable
	accept *gates.AcceptAnswer // accepter: the decision, held to its quotes
	// stalled: the accepter rejects the Team for the reason of its previous
	// rejection (a no_progress signal, docs/design.md, "Councils and Teams").
	stalled bool
}

// teamMoveOK reports whether the ratchet's table row from -> to is one n
// may take: revising and team_blocked are a Team's alone, and a Team is
// never dispatched.
func teamMoveOK(n *Node, to Status) bool {
	switch {
	case to == Revising || to == TeamBlocked:
		return n.TeamKind != ""
	case to == Running:
		return n.TeamKind == ""
	}
	return true
}

// isTeam reports whether n is a Team node.
func isTeam(n *Node) bool { return n.TeamKind != "" }

// OpenTeam makes the pending node n a Team and queues its planner.
func (t *txn) OpenTeam(q *Quest, n *Node) error {
	n.TeamKind = n.Role
	n.MaxRevisions = q.MaxRevisions
	if n.MaxRevisions <= 0 {
		n.MaxRevisions = DefaultMaxRevisions
	}
	if err := t.Move(q, n, Revising, "Team opened: its planner is queued"); err != nil {
		return err
	}
	_, err := t.newStage(q, n, n, StagePlan, EdgeStagesInto, "")
	return err
}

var stageRoles = map[string]string{StagePlan: RolePlanner, StageExec: RoleExecuter, StageAccept: RoleAccepter}

// newStage creates the pending stage node of team after parent, linked by
// rel; feedback, if any, is what the stage must fix (a rejection's reason).
func (t *txn) newStage(q *Quest, team, parent *Node, stage, rel, feedback string) (*Node, error) {
	hyp := fmt.Sprintf("%s stage of Team %s (%s), revision %d: %s", stage, team.ID, team.TeamKind, team.RevisionCount, domain.Truncate(team.Hypothesis, 400))
	n, dup, err := t.NewNode(q, parent, stageRoles[stage], hyp, Pending, rel)
	if err != nil {
		return nil, err
	}
	if dup {
		return nil, fmt.Errorf("BUG: stage %s of Team %s revision %d exists already as %s", stage, team.ID, team.RevisionCount, n.ID)
	}
	n.Team, n.Stage, n.RevisionCount, n.MaxRevisions, n.Feedback = team.ID, stage, team.RevisionCount, team.MaxRevisions, feedback
	return n, t.SaveNode(n)
}

// judgeStage judges a planner's or an accepter's answer (no L1 catalog:
// neither delivers the worker contract). An answer that breaks its
// contract is a FAIL try of the stage.
func (e *Engine) judgeStage(q *Quest, n *Node, reply agent.Reply, res result) result {
	fail := func(facts []gates.Fact) result {
		res.kind, res.facts, res.feedback = resFail, facts, Feedback(facts)
		return res
	}
	switch n.Stage {
	case StagePlan:
		plan := strings.TrimSpace(string(reply.Output))
		if plan == "" {
			return fail([]gates.Fact{{Rule: "plan", Level: gates.Fail, Where: "answer", Expected: "a plan for the executer", Actual: "an empty answer"}})
		}
		res.kind, res.stage = resPass, &stageResult{plan: domain.Truncate(plan, 4000)}
		return res
	case StageAccept:
		a, facts := gates.ParseAcceptAnswer(reply.Output)
		if len(facts) > 0 {
			return fail(facts)
		}
		var exec, team *Node
		err := e.store.view(func(tx *store.Tx) error {
			var err error
			if exec, err = readNode(tx, n.Parent); err != nil {
				return err
			}
			team, err = readNode(tx, n.Team)
			return err
		})
		if err != nil {
			res.kind, res.why = resInterrupted, err.Error()
			return res
		}
		a, res.facts = gates.CheckAccept(a, deliverable(exec))
		res.feedback = Feedback(res.facts)
		st := &stageResult{accept: &a}
		st.stalled = a.Decision == gates.AcceptReject && team.Feedback != "" && gates.QuoteKey(a.Reason) == gates.QuoteKey(team.Feedback)
		res.kind, res.stage = resPass, st
		if a.Decision == gates.AcceptAccept && (q.AcceptMode == AcceptHuman || exec.Outcome == "REVIEW") {
			res.kind, res.why = resReview, fmt.Sprintf("the accept of Team %s waits for the button", n.Team)
			res.reasons = acceptReasons(q, n, exec, a)
		}
		return res
	}
	panic("BUG: judgeStage on stage " + n.Stage)
}

// acceptReasons are why the accept a of Team n.Team waits for a human:
// the quest's accept mode, or the facts the quest's L1 gate gave the
// deliverable (exec), which the human stands in for.
func acceptReasons(q *Quest, n, exec *Node, a gates.AcceptAnswer) []ConsentReason {
	why := "the deliverable's L1 gate asks for review"
	if q.AcceptMode == AcceptHuman {
		why = "accept mode human"
	}
	out := []ConsentReason{{Kind: ReasonTeamAccept, Team: n.Team,
		Text: fmt.Sprintf("human accept of Team %s (%s); the accepter says: %s", n.Team, why, domain.Truncate(a.Reason, 300))}}
	if exec.Outcome == "REVIEW" {
		out = append(out, domain.RuleReasons(exec.Facts)...)
	}
	return out
}

// judgeExec turns an executer's answer into a result: the deliverable must
// keep the worker contract (else a FAIL try of the executer); its L1
// outcome is recorded for the accept, and the stage itself is done.
func judgeExec(a gates.Answer, v gates.Verdict, res result) result {
	res.answer = &a
	res.kind = resPass
	res.stage = &stageResult{l1: v.Outcome.String()}
	res.why = "deliverable handed to the accepter; L1 " + v.Outcome.String()
	return res
}

// deliverable is the text an accept must quote: the executer's evidence
// and the quotes it cites.
func deliverable(exec *Node) string {
	var b strings.Builder
	b.WriteString(exec.Evidence)
	for _, c := range exec.Citations {
		b.WriteString("\n")
		b.WriteString(c.Quote)
	}
	return b.String()
}

// StagePassed records a stage's good answer (its L1 outcome, for an
// executer) and moves its Team on.
func (t *txn) StagePassed(q *Quest, n *Node, runID string, res result) error {
	n.AddAttempt(Attempt{At: t.now, Run: runID, Outcome: res.outcome(), Facts: res.facts, ClaimHash: res.claim})
	return t.stageDone(q, n, res.answer, res.stage, "PASS")
}

// stageDone locks a stage that did its work and queues what follows it.
func (t *txn) stageDone(q *Quest, n *Node, a *gates.Answer, st *stageResult, outcome string) error {
	n.Claim = nil
	switch {
	case st.plan != "":
		n.Evidence = st.plan
	case a != nil:
		n.Verdict, n.Evidence, n.Citations, n.NewDirections = a.Verdict, a.Evidence, a.Citations, a.NewDirections
		n.Outcome = st.l1
	case st.accept != nil:
		n.Verdict, n.Evidence = st.accept.Decision, st.accept.Reason
	}
	if err := t.Move(q, n, Passed, "stage done"); err != nil {
		return err
	}
	if err := t.Move(q, n, Explored, n.Stage+" stage done"); err != nil {
		return err
	}
	recorded := outcome
	if a != nil {
		recorded = "DELIVERED (L1 " + st.l1 + ")"
	}
	if err := t.Ledger(n, recorded, n.Facts); err != nil {
		return err
	}
	team, err := t.Node(n.Team)
	if err != nil {
		return err
	}
	if team.Status != Revising {
		return nil // the Team was aborted meanwhile: nothing follows
	}
	switch n.Stage {
	case StagePlan:
		return t.nextStage(q, team, n, StageExec, EdgeMakesPlan, "")
	case StageExec:
		return t.nextStage(q, team, n, StageAccept, EdgeExecutes, "")
	}
	exec, err := t.Node(n.Parent)
	if err != nil {
		return err
	}
	acc := st.accept
	if acc.Decision == gates.AcceptReject {
		if st.stalled {
			if err := t.teamStall(q, team, acc.Reason); err != nil {
				return err
			}
		}
		return t.revise(q, team, n, acc.RevisionTarget, acc.Reason)
	}
	if exec.Outcome != "PASS" && !(exec.Outcome == "REVIEW" && outcome == "CONSENT") {
		return t.revise(q, team, n, gates.TargetExecuter, "the deliverable failed the quest's L1 gate:\n"+Feedback(exec.Facts))
	}
	if err := t.Edge(q, n.ID, team.ID, EdgeAcceptsTo); err != nil {
		return err
	}
	team.Facts = append(team.Facts, exec.Facts...)
	return t.Pass(q, team, &gates.Answer{Verdict: exec.Verdict, Evidence: exec.Evidence, Citations: exec.Citations, NewDirections: exec.NewDirections}, nil, outcome)
}

// revise counts a rejection of team by its accepter acc and queues the
// revision's stage for target, or blocks the Team past its cap: with
// max_revisions N, N revisions are made and the N+1th rejection blocks
// it (cap exceeded).
func (t *txn) revise(q *Quest, team, acc *Node, target, reason string) error {
	team.RevisionCount++
	team.Feedback = reason
	team.Facts = append(team.Facts, gates.Fact{Rule: "team-reject", Level: gates.Fail, Where: "accepter " + acc.ID,
		Expected: "the accepter accepts a deliverable that passes L1", Actual: domain.Truncate(oneLineText(reason), 300)})
	if team.RevisionCount > team.MaxRevisions {
		return t.blockTeam(q, team, fmt.Sprintf("max_revisions %d: cap exceeded, rejected %d times; last: %s", team.MaxRevisions, team.RevisionCount, domain.Truncate(oneLineText(reason), 200)))
	}
	stage := StageExec
	if target == gates.TargetPlanner {
		stage = StagePlan
	}
	if err := t.SaveNode(team); err != nil {
		return err
	}
	if err := t.Emit(Event{Kind: KindNode, Quest: q.ID, Node: team.ID, Role: team.Role, From: string(Revising), To: string(Revising),
		Reason: fmt.Sprintf("revision %d of %d: back to the %s", team.RevisionCount, team.MaxRevisions, target)}); err != nil {
		return err
	}
	return t.nextStage(q, team, acc, stage, EdgeRejectsTo, reason)
}

// nextStage is newStage for the stage that follows one that is done (or
// a revision's): follow-up work, dispatched once this commit lands
// (chain.go), not at the next tick.
func (t *txn) nextStage(q *Quest, team, parent *Node, stage, rel, feedback string) error {
	n, err := t.newStage(q, team, parent, stage, rel, feedback)
	if err != nil {
		return err
	}
	t.FollowUp(q, n.ID)
	return nil
}

// blockTeam locks team as team_blocked and queues an owner turn, whose
// prompt lists the blocked Team as a fail fact (ownerTeamFacts).
func (t *txn) blockTeam(q *Quest, team *Node, why string) error {
	team.Reason = why
	team.Outcome = "FAIL"
	if err := t.Move(q, team, TeamBlocked, why); err != nil {
		return err
	}
	if err := t.Ledger(team, "TEAM_BLOCKED", team.Facts); err != nil {
		return err
	}
	if q.Mode != ModeTeam || !q.HasRole(RoleOwner) {
		return nil
	}
	_, _, err := t.NewOwner(q, q.Counts.Get(Proposed) > 0)
	return err
}

// StageExhausted blocks the Team of a stage that used up its tries.
func (t *txn) StageExhausted(q *Quest, n *Node) error {
	team, err := t.Node(n.Team)
	if err != nil {
		return err
	}
	if team.Status != Revising {
		return nil
	}
	return t.blockTeam(q, team, fmt.Sprintf("its %s %s exhausted its tries", n.Stage, n.ID))
}

// teamStall is the no_progress signal of a Team rejected twice for the same
// reason: it counts one more stalled step on the quest (see stall) and
// stops the quest at max_stalled.
func (t *txn) teamStall(q *Quest, team *Node, reason string) error {
	if q.Limits.MaxStalled <= 0 {
		return nil
	}
	q.StallCount++
	t.Track(q)
	if q.StallCount >= q.Limits.MaxStalled && q.Status == QuestActive {
		return t.SetQuestStatus(q, QuestStopped, fmt.Sprintf("no progress: Team %s rejected again for the same reason (%s), %d stalled steps in a row; needs attention (`questbox quest resume %s` after a look)",
			team.ID, domain.Truncate(oneLineText(reason), 120), q.StallCount, q.ID))
	}
	return nil
}

// stallNeutral reports whether a result neither counts towards no_progress
// nor breaks a row of it: a Team stage that delivered (a plan, a
// deliverable, a decision) is the Team's pipeline moving, judged by its
// accepter's decisions (teamStall), not by its bytes.
func stallNeutral(n *Node, res result) bool {
	return n.Team != "" && res.kind == resPass
}

func oneLineText(s string) string { return strings.Join(strings.Fields(s), " ") }

// stageContract is the answer contract of a stage, as its agent reads it.
func stageContract(q *Quest, n *Node) string {
	switch n.Stage {
	case StagePlan:
		return fmt.Sprintf("You are the planner of Team %s (%s). Write the plan an executer will follow to settle the Team's hypothesis: the steps, what to measure, and what will count as done. Answer with the plan as plain text.\n%s", n.Team, stageKind(n), acceptCriteria(q, n))
	case StageExec:
		return fmt.Sprintf("You are the executer of Team %s. Carry out the planner's plan (the planner's evidence above) and deliver the result.\n%s", n.Team, workerContract)
	case StageAccept:
		return fmt.Sprintf("You are the accepter of Team %s. Judge the executer's deliverable (its evidence above) against the plan and the Team's accept criteria.\n%s"+
			"Answer with exactly one JSON object:\n"+
			`{"decision": "accept" | "reject", "reason": "why", "revision_target": "planner" | "executer" (a reject only), "citations": [{"quote": "exact words of the deliverable"}]}`+"\n"+
			"An accept must quote the deliverable word for word; an accept without a verified quote is a reject.\n", n.Team, acceptCriteria(q, n))
	}
	return workerContract
}

// acceptCriteria are the accept criteria of a stage's Team, from the
// quest's TeamAccept (copied from `[teams.KIND] accept` at creation).
func acceptCriteria(q *Quest, n *Node) string {
	kind := stageKind(n)
	c := q.TeamAccept[kind]
	if c == "" {
		c = q.TeamAccept["custom"]
	}
	if c == "" {
		return "Accept criteria: the deliverable settles the Team's hypothesis with cited evidence.\n"
	}
	return "Accept criteria: " + c + "\n"
}

// stageKind reads the Team kind written into a stage's hypothesis.
func stageKind(n *Node) string {
	_, rest, ok := strings.Cut(n.Hypothesis, " (")
	if !ok {
		return ""
	}
	kind, _, _ := strings.Cut(rest, ")")
	return kind
}

// abortedInTeam keeps a Team whole when n was just aborted: an aborted
// Team's waiting stage is aborted with it (a running one finishes and is
// followed by nothing, see stageDone), and a Team whose stage was aborted
// on its own is blocked, so that its owner decides again instead of the
// Team waiting for a stage that will never come.
func (t *txn) abortedInTeam(q *Quest, n *Node) error {
	if isTeam(n) {
		for _, id := range t.waitingStages(q) {
			s, err := t.Node(id)
			if err != nil {
				return err
			}
			if s.Team == n.ID && !s.Status.Terminal() && s.Status != Running {
				if err := t.Abort(q, s, "its Team "+n.ID+" was aborted"); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if n.Team == "" {
		return nil
	}
	team, err := t.Node(n.Team)
	if err != nil || team.Status != Revising {
		return err
	}
	return t.blockTeam(q, team, fmt.Sprintf("its %s stage %s was aborted: %s", n.Stage, n.ID, n.Reason))
}

// waitingStages lists the quest's nodes that wait in the pending, deferred
// or consent index: a Team's one open stage is among them. A running
// node stays in the pending index (schema 6): callers skip it by its
// status.
func (t *txn) waitingStages(q *Quest) []string {
	var ids []string
	for _, idx := range [][]byte{bPending, bDeferred} {
		if b := subRO(t.tx, idx, q.ID); b != nil {
			_ = b.ForEach(func(_, v []byte) error { ids = append(ids, string(v)); return nil })
		}
	}
	if q.Counts.Get(AwaitingConsent) > 0 {
		_ = t.tx.Consent().ForEach(func(k, v []byte) error {
			if string(v) == q.ID {
				ids = append(ids, string(k))
			}
			return nil
		})
	}
	return ids
}

// ownerTeamFacts writes the quest's blocked Teams, newest first, into an
// owner's prompt as fail facts (at most 10).
func ownerTeamFacts(tx *store.Tx, q *Quest, b *strings.Builder) error {
	if !q.Teams || q.Counts.Get(TeamBlocked) == 0 {
		return nil
	}
	lb := subRO(tx, bLocked, q.ID)
	if lb == nil {
		return nil
	}
	b.WriteString("\nTeams that are team_blocked (FAIL: their accepter rejected them past max_revisions, or a stage exhausted its tries); decide again:\n")
	c := lb.Cursor()
	nodes, cur := tx.Nodes(), (*store.Cursor)(nil)
	shown, want := 0, min(10, q.Counts.Get(TeamBlocked))
	for k, v := c.Last(); k != nil && shown < want; k, v = c.Prev() {
		// Most locked nodes of a long quest are not blocked Teams: their
		// status is read from the record without decoding it. A locked
		// record is terminal, so no running entry overlays its status.
		if key, err := nodeKey(string(v)); err == nil {
			if st, ok := scanStatus(get(&cur, nodes, key)); ok && st != TeamBlocked {
				continue
			}
		}
		n, err := readNode(tx, string(v))
		if err != nil {
			return err
		}
		if n.Status != TeamBlocked {
			continue
		}
		shown++
		fmt.Fprintf(b, "- FAIL Team %s (%s): %s\n  blocked: %s\n", n.ID, n.TeamKind, domain.Truncate(n.Hypothesis, 200), n.Reason)
	}
	return nil
}

// HumanRejectsAccept applies a human's rejection of an accept held on the
// accepter n: the person stands in for the accepter, so the Team is
// rejected (a revision of its executer, counted like any) and the
// accepter's stage is done; it is not asked again.
func (t *txn) HumanRejectsAccept(q *Quest, n *Node, by string) error {
	n.ChainForm()
	if n.LastAttempt != nil {
		n.LastAttempt.TryUsed = false // a revision of the Team, not a try of the accepter
		if n.Logged {
			n.Attempts[len(n.Attempts)-1].TryUsed = false
		}
	}
	a := gates.AcceptAnswer{Decision: gates.AcceptReject, RevisionTarget: gates.TargetExecuter,
		Reason: "the accept was rejected by a human (" + by + ")"}
	return t.stageDone(q, n, nil, &stageResult{accept: &a}, "REJECTED")
}

// AcceptConsented applies a human's consent to an accept held on the
// accepter n (AcceptMode human, or a deliverable L1 sent to review): the
// kept answer is read again and the Team moves on as from a judge's
// accept, with the human standing in for the L1 review.
func (t *txn) AcceptConsented(q *Quest, n *Node, outcome string) error {
	a, facts := gates.ParseAcceptAnswer([]byte(n.Claim.Raw))
	if len(facts) > 0 {
		return fmt.Errorf("BUG: node %s kept an accept that does not parse: %v", n.ID, facts)
	}
	exec, err := t.Node(n.Parent)
	if err != nil {
		return err
	}
	a, _ = gates.CheckAccept(a, deliverable(exec))
	return t.stageDone(q, n, nil, &stageResult{accept: &a}, outcome)
}

// checkTeams fills a spec's Teams defaults and lists what is wrong with
// them: Teams only in team mode (the owner dispatches Teams), a positive
// max_revisions, accept mode judge or human, and accept criteria only for
// the known team kinds. A spec without Teams must not set their fields.
func checkTeams(s *QuestSpec) []string {
	var probs []string
	if !s.Teams {
		if s.MaxRevisions != 0 || s.AcceptMode != "" {
			probs = append(probs, "max_revisions and accept_mode need --teams")
		}
		s.TeamAccept = nil
		return probs
	}
	if s.Mode != ModeTeam {
		probs = append(probs, fmt.Sprintf("--teams needs mode team (the owner dispatches Teams), not %s", s.Mode))
	}
	if s.MaxRevisions == 0 {
		s.MaxRevisions = DefaultMaxRevisions
	}
	if s.MaxRevisions < 1 {
		probs = append(probs, fmt.Sprintf("max_revisions %d must be at least 1", s.MaxRevisions))
	}
	if s.AcceptMode == "" {
		s.AcceptMode = AcceptJudge
	}
	if s.AcceptMode != AcceptJudge && s.AcceptMode != AcceptHuman {
		probs = append(probs, fmt.Sprintf("accept mode %q is not one of judge, human", s.AcceptMode))
	}
	for k := range s.TeamAccept {
		if !slices.Contains(TeamKinds, k) {
			probs = append(probs, fmt.Sprintf("team kind %q is not one of %s", k, strings.Join(TeamKinds, ", ")))
		}
	}
	return probs
}
