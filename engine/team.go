package engine

import (
	"fmt"
	"strings"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/engine/team"
	"github.com/questbox/questbox/gates"
)

// Teams (docs/design.md, "Teams"): their rules are package engine/team's;
// here are what ties them to the engine: the judging of a stage's answer
// into a result, the index reads a Team's rules ask of the transaction,
// the owner's prompt's blocked Teams, and the names the engine's callers
// use.

var _ team.Txn = (*txn)(nil)

// DefaultMaxRevisions is how many revisions a Team may make when the
// quest names no cap: the rejection after the last one blocks it.
const DefaultMaxRevisions = team.DefaultMaxRevisions

// TeamKinds are the team kinds `[teams.KIND]` may configure.
var TeamKinds = team.Kinds

// OpenTeam makes the pending node n a Team and queues its planner.
func (t *txn) OpenTeam(q *Quest, n *Node) error { return team.Open(t, q, n) }

// StagePassed records a stage's good answer (its L1 outcome, for an
// executer) and moves its Team on.
func (t *txn) StagePassed(q *Quest, n *Node, runID string, res result) error {
	n.AddAttempt(Attempt{At: t.now, Run: runID, Outcome: res.outcome(), Facts: res.facts, ClaimHash: res.claim})
	return team.StageDone(t, q, n, res.answer, res.stage, "PASS")
}

// StageExhausted blocks the Team of a stage that used up its tries.
func (t *txn) StageExhausted(q *Quest, n *Node) error { return team.StageExhausted(t, q, n) }

// HumanRejectsAccept applies a human's rejection of an accept held on the
// accepter n (team.HumanRejectsAccept).
func (t *txn) HumanRejectsAccept(q *Quest, n *Node, by string) error {
	return team.HumanRejectsAccept(t, q, n, by)
}

// AcceptConsented applies a human's consent to an accept held on the
// accepter n (team.AcceptConsented).
func (t *txn) AcceptConsented(q *Quest, n *Node, outcome string) error {
	return team.AcceptConsented(t, q, n, outcome)
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
		res.kind, res.stage = resPass, &team.Stage{Plan: domain.Truncate(plan, 4000)}
		return res
	case StageAccept:
		a, facts := gates.ParseAcceptAnswer(reply.Output)
		if len(facts) > 0 {
			return fail(facts)
		}
		var exec, teamNode *Node
		err := e.store.view(func(tx *store.Tx) error {
			var err error
			if exec, err = records.ReadNode(tx, n.Parent); err != nil {
				return err
			}
			teamNode, err = records.ReadNode(tx, n.Team)
			return err
		})
		if err != nil {
			res.kind, res.why = resInterrupted, err.Error()
			return res
		}
		a, res.facts = gates.CheckAccept(a, team.Deliverable(exec))
		res.feedback = Feedback(res.facts)
		st := &team.Stage{Accept: &a}
		st.Stalled = a.Decision == gates.AcceptReject && teamNode.Feedback != "" && gates.QuoteKey(a.Reason) == gates.QuoteKey(teamNode.Feedback)
		res.kind, res.stage = resPass, st
		if a.Decision == gates.AcceptAccept && (q.AcceptMode == AcceptHuman || exec.Outcome == "REVIEW") {
			res.kind, res.why = resReview, fmt.Sprintf("the accept of Team %s waits for the button", n.Team)
			res.reasons = team.AcceptReasons(q, n, exec, a)
		}
		return res
	}
	panic("BUG: judgeStage on stage " + n.Stage)
}

// judgeExec turns an executer's answer into a result: the deliverable must
// keep the worker contract (else a FAIL try of the executer); its L1
// outcome is recorded for the accept, and the stage itself is done.
func judgeExec(a gates.Answer, v gates.Verdict, res result) result {
	res.answer = &a
	res.kind = resPass
	res.stage = &team.Stage{L1: v.Outcome.String()}
	res.why = "deliverable handed to the accepter; L1 " + v.Outcome.String()
	return res
}

// stallNeutral reports whether a result neither counts towards no_progress
// nor breaks a row of it: a Team stage that delivered (a plan, a
// deliverable, a decision) is the Team's pipeline moving, judged by its
// accepter's decisions (team.StageDone), not by its bytes.
func stallNeutral(n *Node, res result) bool {
	return n.Team != "" && res.kind == resPass
}

// WaitingStages lists the quest's nodes that wait in the pending, deferred
// or consent index: a Team's one open stage is among them. A running
// node stays in the pending index (schema 6): callers skip it by its
// status.
func (t *txn) WaitingStages(q *Quest) []string {
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
		if key, err := records.NodeKey(string(v)); err == nil {
			if st, ok := records.ScanStatus(get(&cur, nodes, key)); ok && st != TeamBlocked {
				continue
			}
		}
		n, err := records.ReadNode(tx, string(v))
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

// checkTeams fills a spec's Teams defaults and lists what is wrong with
// them (team.CheckSpec).
func checkTeams(s *QuestSpec) []string {
	ts := team.Spec{Mode: s.Mode, Teams: s.Teams, MaxRevisions: s.MaxRevisions, AcceptMode: s.AcceptMode, Accept: s.TeamAccept}
	probs := team.CheckSpec(&ts)
	s.MaxRevisions, s.AcceptMode, s.TeamAccept = ts.MaxRevisions, ts.AcceptMode, ts.Accept
	return probs
}
