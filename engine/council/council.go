package council

// Councils (docs/design.md, "Councils"): an owner turn of a quest with a
// council is two phases. In its design phase the owner does not run an
// agent: it moves pending -> council_pending and spawns its members (one
// node per reviewer and judge, relation council_of, each with its own
// provider), which run concurrently, each under the ratchet. When every
// member is terminal the engine (not a model) merges their answers by
// rule (gates.MergeCouncil) and the merged actions are the owner's run
// phase, validated and applied exactly like a v2 owner's.
//
// How the tick finds a sitting council without scanning: the owner in
// council_pending is Quest.Queued[Queued], and its members are found
// through the quest's hypothesis index, their hypotheses being a function
// of the owner, the sitting and the member's place (MemberHypothesis). A
// council sits again (a new sitting, new members) when every judge
// abstained; each such sitting uses one of the owner's tries.

import (
	"fmt"
	"strings"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/gates"
)

// Queued is the key of Quest.Queued naming the quest's owner in
// council_pending, if any.
const Queued = "council"

// Rule ids of the facts a council leaves on its owner.
// RuleDissent is the rule of the fact that keeps a council member's
// dissent on its owner: its Where is the member's id, its Actual the
// dissent. The faces read a member's dissent from it.
const RuleDissent = "council-dissent"

const (
	RuleDecision = "council"        // how the council decided
	RuleAdvice   = "council-advice" // an action proposed but not applied
)

// MemberHypothesis is the hypothesis of member i (0-based) of role of the
// council of owner at its sitting (1-based).
func MemberHypothesis(owner *domain.Node, role string, i, of, sitting int) string {
	what := "review the owner's decision"
	if domain.IsGateRole(owner.Role) {
		what = fmt.Sprintf("judge whether the %s phase's work may pass", owner.Phase)
	}
	return fmt.Sprintf("%s %d of %d on the council of %s %s, sitting %d: %s", role, i+1, of, owner.Role, owner.ID, sitting, what)
}

// Seat is one member of a sitting council: its role, its provider and
// its hypothesis.
type Seat struct {
	Role, Provider, Hyp string
}

// Seats lists the members of the council of owner at its sitting:
// reviewers first, then judges.
func Seats(q *domain.Quest, owner *domain.Node, sitting int) []Seat {
	var out []Seat
	for i, p := range q.CouncilReviewers {
		out = append(out, Seat{domain.RoleReviewer, p, MemberHypothesis(owner, domain.RoleReviewer, i, len(q.CouncilReviewers), sitting)})
	}
	for i, p := range q.CouncilJudges {
		out = append(out, Seat{domain.RoleJudge, p, MemberHypothesis(owner, domain.RoleJudge, i, len(q.CouncilJudges), sitting)})
	}
	return out
}

// Sitting is the council sitting an owner (or a phase gate) is in: one
// more than the sittings that decided (each leaves a PASS or a FAIL
// attempt; consent attempts do not count): its record counts them
// (Node.Sittings), and a record that holds its whole log (before schema
// 9) has them in it.
func Sitting(owner *domain.Node) int {
	if owner.AttemptCount == 0 {
		return 1 + domain.SittingsIn(owner.Attempts)
	}
	return 1 + owner.Sittings
}

// Open starts owner's design phase: pending -> council_pending, and one
// pending member node per seat.
func Open(t Txn, q *domain.Quest, owner *domain.Node) error {
	if owner.Role == domain.RoleOwner {
		owner.Phase = domain.PhaseDesign // a gate keeps the phase it closes
	}
	if err := t.Move(q, owner, domain.CouncilPending, fmt.Sprintf("design phase: a council of %d reviewer(s) and %d judge(s) sits", len(q.CouncilReviewers), len(q.CouncilJudges))); err != nil {
		return err
	}
	for _, s := range Seats(q, owner, Sitting(owner)) {
		m, dup, err := t.NewNode(q, owner, s.Role, s.Hyp, domain.Pending, domain.EdgeCouncilOf)
		if err != nil {
			return err
		}
		if dup {
			return fmt.Errorf("BUG: council member %q of owner %s exists already as %s", s.Hyp, owner.ID, m.ID)
		}
		m.Provider, m.Phase = s.Provider, domain.PhaseDesign
		if err := t.SaveNode(m); err != nil {
			return err
		}
	}
	return nil
}

// Members returns the member nodes of the sitting council of owner, read
// for their status only (NodeHead), in seat order. A seat whose node is
// missing (a salvaged store) is skipped.
func Members(t Txn, q *domain.Quest, owner *domain.Node) ([]*domain.Node, error) {
	seats := Seats(q, owner, Sitting(owner))
	out := make([]*domain.Node, 0, len(seats))
	for _, s := range seats {
		id := t.HypNode(q.ID, s.Hyp)
		if id == "" {
			continue
		}
		m, err := t.NodeHead(id)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// Decide merges the answers of owner's council, every member being
// terminal. When nobody who decides answered, the owner goes back to
// pending (its turn comes again, with a new sitting) using a try;
// otherwise the merged actions are its run phase and it locks.
func Decide(t Txn, q *domain.Quest, owner *domain.Node) error {
	ms, err := Members(t, q, owner)
	if err != nil {
		return err
	}
	var votes []gates.Vote
	var facts []gates.Fact
	for _, head := range ms {
		m, err := t.Node(head.ID)
		if err != nil {
			return err
		}
		v := gates.Vote{Role: m.Role, Member: m.ID}
		if m.Status == domain.Explored && m.Evidence != "" {
			a, f := gates.ParseMemberAnswer(m.Role, []byte(m.Evidence))
			if len(f) == 0 {
				v.Answer = &a
				if d := strings.TrimSpace(a.Dissent); d != "" {
					facts = append(facts, gates.Fact{Rule: RuleDissent, Level: gates.Review, Where: m.ID,
						Expected: fmt.Sprintf("the council's decision (%s %s on %s dissents)", m.Role, m.ID, q.ProviderFor(m)), Actual: domain.Truncate(d, 500)})
				}
			}
		}
		if v.Answer == nil {
			facts = append(facts, gates.Fact{Rule: RuleDecision, Level: gates.Review, Where: fmt.Sprintf("%s %s", m.Role, m.ID),
				Expected: "a vote", Actual: fmt.Sprintf("abstained (%s)", m.Status)})
		}
		votes = append(votes, v)
	}
	d := gates.MergeCouncil(votes)
	for _, a := range d.Advisory {
		facts = append(facts, gates.Fact{Rule: RuleAdvice, Level: gates.Review, Where: fmt.Sprintf("%s %s", a.Action, strings.TrimSpace(a.Node+" "+a.Hypothesis)),
			Expected: "advice, shown and not applied", Actual: DescribeAction(a)})
	}
	facts = append(facts, gates.Fact{Rule: RuleDecision, Level: gates.Review, Where: "merge", Expected: "a decision by rule", Actual: d.Why})
	owner.Facts = facts
	owner.Feedback = t.Feedback(facts)
	if !d.Decided {
		owner.Outcome = "FAIL"
		owner.AddAttempt(domain.Attempt{At: t.Now(), Outcome: "FAIL", Facts: facts, Feedback: d.Why, TryUsed: true})
		if err := t.Emit(domain.Event{Kind: domain.KindVerdict, Quest: q.ID, Node: owner.ID, Role: owner.Role, Outcome: "FAIL", Facts: facts, Feedback: owner.Feedback, RootCause: RuleDecision, Reason: d.Why}); err != nil {
			return err
		}
		return t.FailTry(q, owner, "FAIL")
	}
	if domain.IsGateRole(owner.Role) {
		return gateDecided(t, q, owner, d, facts)
	}
	o := &gates.OwnerAnswer{Evidence: Evidence(d), Actions: d.Actions}
	owner.Phase = domain.PhaseRun
	owner.Outcome = "PASS"
	owner.ClaimHash = gates.ClaimHash([]byte(o.Evidence))
	owner.AddAttempt(domain.Attempt{At: t.Now(), Outcome: "PASS", Facts: facts, ClaimHash: owner.ClaimHash})
	if err := t.Emit(domain.Event{Kind: domain.KindVerdict, Quest: q.ID, Node: owner.ID, Role: owner.Role, Outcome: "PASS", Facts: facts, ClaimHash: owner.ClaimHash, Reason: d.Why}); err != nil {
		return err
	}
	return t.Pass(q, owner, nil, o, "PASS")
}

// Evidence is the owner's evidence after a council: how it decided and
// what it applies.
func Evidence(d gates.Decision) string {
	var b strings.Builder
	fmt.Fprintf(&b, "council: %s.", d.Why)
	if d.Verdict != "" {
		fmt.Fprintf(&b, " verdict: %s.", d.Verdict)
	}
	if len(d.Actions) == 0 {
		b.WriteString(" No action applies.")
	}
	for _, a := range d.Actions {
		b.WriteString(" Applies: " + DescribeAction(a) + ".")
	}
	return b.String()
}

// DescribeAction is an action in one line.
func DescribeAction(a gates.Action) string {
	s := a.Action
	for _, f := range []string{a.Node, a.Role, a.Hypothesis, a.Summary, a.Reason} {
		if f != "" {
			s += " " + domain.Truncate(f, 200)
		}
	}
	return s
}

// MemberPass locks a council member that answered: its answer, encoded
// as its role answers (gates.MemberAnswer.Encode), is its evidence, its
// verdict source (or "advice" for a reviewer) its verdict; the reply
// goes to the owner (council_reply).
func MemberPass(t Txn, q *domain.Quest, n *domain.Node, m *gates.MemberAnswer) error {
	n.Claim = nil
	if err := t.Move(q, n, domain.Passed, "gate PASS"); err != nil {
		return err
	}
	n.Evidence = string(m.Encode(n.Role))
	n.Verdict = m.VerdictSource
	if n.Verdict == "" {
		n.Verdict = "advice"
	}
	if err := t.Move(q, n, domain.Explored, "council member answered"); err != nil {
		return err
	}
	if err := t.Ledger(n, "PASS", n.Facts); err != nil {
		return err
	}
	if n.Parent != "" {
		return t.Edge(q, n.ID, n.Parent, domain.EdgeCouncilReply)
	}
	return nil
}

// StillRunning keeps Quest.Running naming a running node while a council
// sits: when the member it named ends, another running member takes its
// place (members run concurrently; Running names one of them).
func StillRunning(t Txn, q *domain.Quest) error {
	if q.Running != "" || q.Queued[Queued] == "" {
		return nil
	}
	ms, err := t.SittingMembers(q)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if m.Status == domain.Running {
			q.Running = m.ID
			t.Track(q)
			return nil
		}
	}
	return nil
}
