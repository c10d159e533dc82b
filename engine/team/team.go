package team

import (
	"fmt"
	"slices"
	"strings"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/gates"
)

// Txn is what the Team rules ask of one engine transaction: read and save
// nodes, move them under the ratchet, link and create them, record their
// outcomes, and queue the work that follows. It is used from one
// goroutine, the transaction's, and its writes land when the transaction
// commits.
type Txn interface {
	Node(id string) (*domain.Node, error)
	SaveNode(n *domain.Node) error
	Move(q *domain.Quest, n *domain.Node, to domain.Status, why string) error
	NewNode(q *domain.Quest, parent *domain.Node, role, hyp string, st domain.Status, rel string) (n *domain.Node, dup bool, err error)
	Edge(q *domain.Quest, from, to, rel string) error
	Emit(ev domain.Event) error
	Ledger(n *domain.Node, outcome string, facts []gates.Fact) error
	FollowUp(q *domain.Quest, node string)
	Pass(q *domain.Quest, n *domain.Node, a *gates.Answer, o *gates.OwnerAnswer, outcome string) error
	Abort(q *domain.Quest, n *domain.Node, reason string) error
	NewOwner(q *domain.Quest, proposals bool) (*domain.Node, bool, error)
	Track(q *domain.Quest)
	SetQuestStatus(q *domain.Quest, to domain.QuestStatus, reason string) error
	// WaitingStages lists the quest's nodes that wait in the pending,
	// deferred or consent index (running ones included: callers skip
	// them by their status).
	WaitingStages(q *domain.Quest) []string
}

// DefaultMaxRevisions is how many revisions a Team may make when the
// quest names no cap: the rejection after the last one blocks it.
const DefaultMaxRevisions = 2

// Kinds are the team kinds `[teams.KIND]` may configure.
var Kinds = []string{domain.RoleScout, domain.RolePOC, domain.RoleStrategist, "custom"}

// Stage is what judging a stage's answer produced beyond its verdict:
// what StageDone records on the stage and hands on to the next.
type Stage struct {
	Plan   string              // planner: the plan
	L1     string              // executer: the L1 outcome of the deliverable
	Accept *gates.AcceptAnswer // accepter: the decision, held to its quotes
	// Stalled: the accepter rejects the Team for the reason of its previous
	// rejection (a no_progress signal, docs/design.md, "Councils and Teams").
	Stalled bool
}

// MoveOK reports whether the ratchet's table row from -> to is one n
// may take: revising and team_blocked are a Team's alone, and a Team is
// never dispatched.
func MoveOK(n *domain.Node, to domain.Status) bool {
	switch {
	case to == domain.Revising || to == domain.TeamBlocked:
		return n.TeamKind != ""
	case to == domain.Running:
		return n.TeamKind == ""
	}
	return true
}

// isTeam reports whether n is a Team node.
func isTeam(n *domain.Node) bool { return n.TeamKind != "" }

// Open makes the pending node n a Team and queues its planner.
func Open(t Txn, q *domain.Quest, n *domain.Node) error {
	n.TeamKind = n.Role
	n.MaxRevisions = q.MaxRevisions
	if n.MaxRevisions <= 0 {
		n.MaxRevisions = DefaultMaxRevisions
	}
	if err := t.Move(q, n, domain.Revising, "Team opened: its planner is queued"); err != nil {
		return err
	}
	_, err := newStage(t, q, n, n, domain.StagePlan, domain.EdgeStagesInto, "")
	return err
}

var stageRoles = map[string]string{domain.StagePlan: domain.RolePlanner, domain.StageExec: domain.RoleExecuter, domain.StageAccept: domain.RoleAccepter}

// newStage creates the pending stage node of team after parent, linked by
// rel; feedback, if any, is what the stage must fix (a rejection's reason).
func newStage(t Txn, q *domain.Quest, team, parent *domain.Node, stage, rel, feedback string) (*domain.Node, error) {
	hyp := fmt.Sprintf("%s stage of Team %s (%s), revision %d: %s", stage, team.ID, team.TeamKind, team.RevisionCount, domain.Truncate(team.Hypothesis, 400))
	n, dup, err := t.NewNode(q, parent, stageRoles[stage], hyp, domain.Pending, rel)
	if err != nil {
		return nil, err
	}
	if dup {
		return nil, fmt.Errorf("BUG: stage %s of Team %s revision %d exists already as %s", stage, team.ID, team.RevisionCount, n.ID)
	}
	n.Team, n.Stage, n.RevisionCount, n.MaxRevisions, n.Feedback = team.ID, stage, team.RevisionCount, team.MaxRevisions, feedback
	return n, t.SaveNode(n)
}

// AcceptReasons are why the accept a of Team n.Team waits for a human:
// the quest's accept mode, or the facts the quest's L1 gate gave the
// deliverable (exec), which the human stands in for.
func AcceptReasons(q *domain.Quest, n, exec *domain.Node, a gates.AcceptAnswer) []domain.ConsentReason {
	why := "the deliverable's L1 gate asks for review"
	if q.AcceptMode == domain.AcceptHuman {
		why = "accept mode human"
	}
	out := []domain.ConsentReason{{Kind: domain.ReasonTeamAccept, Team: n.Team,
		Text: fmt.Sprintf("human accept of Team %s (%s); the accepter says: %s", n.Team, why, domain.Truncate(a.Reason, 300))}}
	if exec.Outcome == "REVIEW" {
		out = append(out, domain.RuleReasons(exec.Facts)...)
	}
	return out
}

// Deliverable is the text an accept must quote: the executer's evidence
// and the quotes it cites.
func Deliverable(exec *domain.Node) string {
	var b strings.Builder
	b.WriteString(exec.Evidence)
	for _, c := range exec.Citations {
		b.WriteString("\n")
		b.WriteString(c.Quote)
	}
	return b.String()
}

// StageDone locks a stage that did its work and queues what follows it.
func StageDone(t Txn, q *domain.Quest, n *domain.Node, a *gates.Answer, st *Stage, outcome string) error {
	n.Claim = nil
	switch {
	case st.Plan != "":
		n.Evidence = st.Plan
	case a != nil:
		n.Verdict, n.Evidence, n.Citations, n.NewDirections = a.Verdict, a.Evidence, a.Citations, a.NewDirections
		n.Outcome = st.L1
	case st.Accept != nil:
		n.Verdict, n.Evidence = st.Accept.Decision, st.Accept.Reason
	}
	if err := t.Move(q, n, domain.Passed, "stage done"); err != nil {
		return err
	}
	if err := t.Move(q, n, domain.Explored, n.Stage+" stage done"); err != nil {
		return err
	}
	recorded := outcome
	if a != nil {
		recorded = "DELIVERED (L1 " + st.L1 + ")"
	}
	if err := t.Ledger(n, recorded, n.Facts); err != nil {
		return err
	}
	team, err := t.Node(n.Team)
	if err != nil {
		return err
	}
	if team.Status != domain.Revising {
		return nil // the Team was aborted meanwhile: nothing follows
	}
	switch n.Stage {
	case domain.StagePlan:
		return nextStage(t, q, team, n, domain.StageExec, domain.EdgeMakesPlan, "")
	case domain.StageExec:
		return nextStage(t, q, team, n, domain.StageAccept, domain.EdgeExecutes, "")
	}
	exec, err := t.Node(n.Parent)
	if err != nil {
		return err
	}
	acc := st.Accept
	if acc.Decision == gates.AcceptReject {
		if st.Stalled {
			if err := stall(t, q, team, acc.Reason); err != nil {
				return err
			}
		}
		return revise(t, q, team, n, acc.RevisionTarget, acc.Reason)
	}
	if exec.Outcome != "PASS" && !(exec.Outcome == "REVIEW" && outcome == "CONSENT") {
		return revise(t, q, team, n, gates.TargetExecuter, "the deliverable failed the quest's L1 gate:\n"+domain.Feedback(exec.Facts))
	}
	if err := t.Edge(q, n.ID, team.ID, domain.EdgeAcceptsTo); err != nil {
		return err
	}
	team.Facts = append(team.Facts, exec.Facts...)
	return t.Pass(q, team, &gates.Answer{Verdict: exec.Verdict, Evidence: exec.Evidence, Citations: exec.Citations, NewDirections: exec.NewDirections}, nil, outcome)
}

// revise counts a rejection of team by its accepter acc and queues the
// revision's stage for target, or blocks the Team past its cap: with
// max_revisions N, N revisions are made and the N+1th rejection blocks
// it (cap exceeded).
func revise(t Txn, q *domain.Quest, team, acc *domain.Node, target, reason string) error {
	team.RevisionCount++
	team.Feedback = reason
	team.Facts = append(team.Facts, gates.Fact{Rule: "team-reject", Level: gates.Fail, Where: "accepter " + acc.ID,
		Expected: "the accepter accepts a deliverable that passes L1", Actual: domain.Truncate(oneLineText(reason), 300)})
	if team.RevisionCount > team.MaxRevisions {
		return block(t, q, team, fmt.Sprintf("max_revisions %d: cap exceeded, rejected %d times; last: %s", team.MaxRevisions, team.RevisionCount, domain.Truncate(oneLineText(reason), 200)))
	}
	stage := domain.StageExec
	if target == gates.TargetPlanner {
		stage = domain.StagePlan
	}
	if err := t.SaveNode(team); err != nil {
		return err
	}
	if err := t.Emit(domain.Event{Kind: domain.KindNode, Quest: q.ID, Node: team.ID, Role: team.Role, From: string(domain.Revising), To: string(domain.Revising),
		Reason: fmt.Sprintf("revision %d of %d: back to the %s", team.RevisionCount, team.MaxRevisions, target)}); err != nil {
		return err
	}
	return nextStage(t, q, team, acc, stage, domain.EdgeRejectsTo, reason)
}

// nextStage is newStage for the stage that follows one that is done (or
// a revision's): follow-up work, dispatched once this commit lands
// (Txn.FollowUp), not at the next tick.
func nextStage(t Txn, q *domain.Quest, team, parent *domain.Node, stage, rel, feedback string) error {
	n, err := newStage(t, q, team, parent, stage, rel, feedback)
	if err != nil {
		return err
	}
	t.FollowUp(q, n.ID)
	return nil
}

// block locks team as team_blocked and queues an owner turn, whose
// prompt lists the blocked Team as a fail fact.
func block(t Txn, q *domain.Quest, team *domain.Node, why string) error {
	team.Reason = why
	team.Outcome = "FAIL"
	if err := t.Move(q, team, domain.TeamBlocked, why); err != nil {
		return err
	}
	if err := t.Ledger(team, "TEAM_BLOCKED", team.Facts); err != nil {
		return err
	}
	if q.Mode != domain.ModeTeam || !q.HasRole(domain.RoleOwner) {
		return nil
	}
	_, _, err := t.NewOwner(q, q.Counts.Get(domain.Proposed) > 0)
	return err
}

// StageExhausted blocks the Team of a stage that used up its tries.
func StageExhausted(t Txn, q *domain.Quest, n *domain.Node) error {
	team, err := t.Node(n.Team)
	if err != nil {
		return err
	}
	if team.Status != domain.Revising {
		return nil
	}
	return block(t, q, team, fmt.Sprintf("its %s %s exhausted its tries", n.Stage, n.ID))
}

// stall is the no_progress signal of a Team rejected twice for the same
// reason: it counts one more stalled step on the quest (as the engine's
// no_progress rule does, docs/design.md, "Loop control") and stops the
// quest at max_stalled.
func stall(t Txn, q *domain.Quest, team *domain.Node, reason string) error {
	if q.Limits.MaxStalled <= 0 {
		return nil
	}
	q.StallCount++
	t.Track(q)
	if q.StallCount >= q.Limits.MaxStalled && q.Status == domain.QuestActive {
		return t.SetQuestStatus(q, domain.QuestStopped, fmt.Sprintf("no progress: Team %s rejected again for the same reason (%s), %d stalled steps in a row; needs attention (`questbox quest resume %s` after a look)",
			team.ID, domain.Truncate(oneLineText(reason), 120), q.StallCount, q.ID))
	}
	return nil
}

func oneLineText(s string) string { return strings.Join(strings.Fields(s), " ") }

// StageContract is the answer contract of a stage, as its agent reads it;
// worker is the contract of a worker's answer, which an executer keeps.
func StageContract(q *domain.Quest, n *domain.Node, worker string) string {
	switch n.Stage {
	case domain.StagePlan:
		return fmt.Sprintf("You are the planner of Team %s (%s). Write the plan an executer will follow to settle the Team's hypothesis: the steps, what to measure, and what will count as done. Answer with the plan as plain text.\n%s", n.Team, stageKind(n), acceptCriteria(q, n))
	case domain.StageExec:
		return fmt.Sprintf("You are the executer of Team %s. Carry out the planner's plan (the planner's evidence above) and deliver the result.\n%s", n.Team, worker)
	case domain.StageAccept:
		return fmt.Sprintf("You are the accepter of Team %s. Judge the executer's deliverable (its evidence above) against the plan and the Team's accept criteria.\n%s"+
			"Answer with exactly one JSON object:\n"+
			`{"decision": "accept" | "reject", "reason": "why", "revision_target": "planner" | "executer" (a reject only), "citations": [{"quote": "exact words of the deliverable"}]}`+"\n"+
			"An accept must quote the deliverable word for word; an accept without a verified quote is a reject.\n", n.Team, acceptCriteria(q, n))
	}
	return worker
}

// acceptCriteria are the accept criteria of a stage's Team, from the
// quest's TeamAccept (copied from `[teams.KIND] accept` at creation).
func acceptCriteria(q *domain.Quest, n *domain.Node) string {
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
func stageKind(n *domain.Node) string {
	_, rest, ok := strings.Cut(n.Hypothesis, " (")
	if !ok {
		return ""
	}
	kind, _, _ := strings.Cut(rest, ")")
	return kind
}

// Aborted keeps a Team whole when n was just aborted: an aborted
// Team's waiting stage is aborted with it (a running one finishes and is
// followed by nothing, see StageDone), and a Team whose stage was aborted
// on its own is blocked, so that its owner decides again instead of the
// Team waiting for a stage that will never come.
func Aborted(t Txn, q *domain.Quest, n *domain.Node) error {
	if isTeam(n) {
		for _, id := range t.WaitingStages(q) {
			s, err := t.Node(id)
			if err != nil {
				return err
			}
			if s.Team == n.ID && !s.Status.Terminal() && s.Status != domain.Running {
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
	if err != nil || team.Status != domain.Revising {
		return err
	}
	return block(t, q, team, fmt.Sprintf("its %s stage %s was aborted: %s", n.Stage, n.ID, n.Reason))
}

// HumanRejectsAccept applies a human's rejection of an accept held on the
// accepter n: the person stands in for the accepter, so the Team is
// rejected (a revision of its executer, counted like any) and the
// accepter's stage is done; it is not asked again.
func HumanRejectsAccept(t Txn, q *domain.Quest, n *domain.Node, by string) error {
	n.ChainForm()
	if n.LastAttempt != nil {
		n.LastAttempt.TryUsed = false // a revision of the Team, not a try of the accepter
		if n.Logged {
			n.Attempts[len(n.Attempts)-1].TryUsed = false
		}
	}
	a := gates.AcceptAnswer{Decision: gates.AcceptReject, RevisionTarget: gates.TargetExecuter,
		Reason: "the accept was rejected by a human (" + by + ")"}
	return StageDone(t, q, n, nil, &Stage{Accept: &a}, "REJECTED")
}

// AcceptConsented applies a human's consent to an accept held on the
// accepter n (AcceptMode human, or a deliverable L1 sent to review): the
// kept answer is read again and the Team moves on as from a judge's
// accept, with the human standing in for the L1 review.
func AcceptConsented(t Txn, q *domain.Quest, n *domain.Node, outcome string) error {
	a, facts := gates.ParseAcceptAnswer([]byte(n.Claim.Raw))
	if len(facts) > 0 {
		return fmt.Errorf("BUG: node %s kept an accept that does not parse: %v", n.ID, facts)
	}
	exec, err := t.Node(n.Parent)
	if err != nil {
		return err
	}
	a, _ = gates.CheckAccept(a, Deliverable(exec))
	return StageDone(t, q, n, nil, &Stage{Accept: &a}, outcome)
}

// Spec is the Teams part of a quest's spec, as CheckSpec reads and fills
// it.
type Spec struct {
	Mode         string
	Teams        bool
	MaxRevisions int
	AcceptMode   string
	Accept       map[string]string // criteria per team kind
}

// CheckSpec fills a spec's Teams defaults and lists what is wrong with
// them: Teams only in team mode (the owner dispatches Teams), a positive
// max_revisions, accept mode judge or human, and accept criteria only for
// the known team kinds. A spec without Teams must not set their fields.
func CheckSpec(s *Spec) []string {
	var probs []string
	if !s.Teams {
		if s.MaxRevisions != 0 || s.AcceptMode != "" {
			probs = append(probs, "max_revisions and accept_mode need --teams")
		}
		s.Accept = nil
		return probs
	}
	if s.Mode != domain.ModeTeam {
		probs = append(probs, fmt.Sprintf("--teams needs mode team (the owner dispatches Teams), not %s", s.Mode))
	}
	if s.MaxRevisions == 0 {
		s.MaxRevisions = DefaultMaxRevisions
	}
	if s.MaxRevisions < 1 {
		probs = append(probs, fmt.Sprintf("max_revisions %d must be at least 1", s.MaxRevisions))
	}
	if s.AcceptMode == "" {
		s.AcceptMode = domain.AcceptJudge
	}
	if s.AcceptMode != domain.AcceptJudge && s.AcceptMode != domain.AcceptHuman {
		probs = append(probs, fmt.Sprintf("accept mode %q is not one of judge, human", s.AcceptMode))
	}
	for k := range s.Accept {
		if !slices.Contains(Kinds, k) {
			probs = append(probs, fmt.Sprintf("team kind %q is not one of %s", k, strings.Join(Kinds, ", ")))
		}
	}
	return probs
}
