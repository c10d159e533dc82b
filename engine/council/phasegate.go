package council

// Phase gates (docs/design.md, "Phase gates"): `--gates scout,poc` closes
// each listed phase (the work of one role) with a council gate. When every
// node of a phase's role is terminal, a gate node (role "<phase>_gate", Phase
// the phase) sits as a council (council.go): a strict majority of its judges
// saying pass opens the next phase (the pending nodes of the next role in the
// quest's roles, owner aside, may dispatch; until then they wait); otherwise
// (revise, or a reviewer-only council, which can never pass a gate) the gate
// spawns a revision of the phase's newest node, with the council's facts as
// its feedback, and sits again once that revision is terminal. A council that
// decides nothing sits again, using one of the gate's tries. `--checkpoint
// scout_gate` makes a pass wait for the button (awaiting_consent); a
// rejection sends the gate back to sit again.
//
// Cost: a quest with phase gates reads, per tick, its gates by their
// hypothesis keys and its open nodes (pending, proposed, deferred,
// awaiting consent) to tell whether a phase is done; a quest without
// reads nothing more.

import (
	"fmt"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/gates"
)

// GateHypothesis is the hypothesis of the round-th gate of phase.
func GateHypothesis(phase string, round int) string {
	return fmt.Sprintf("Phase gate %s, round %d: may the %s phase's work pass to the next phase?", phase, round, phase)
}

// latestGate is the newest gate node of phase (read whole), nil if the
// phase never had one, and its round.
func latestGate(t Txn, q *domain.Quest, phase string) (*domain.Node, int, error) {
	var last string
	round := 0
	for {
		id := t.HypNode(q.ID, GateHypothesis(phase, round+1))
		if id == "" {
			break
		}
		last, round = id, round+1
	}
	if last == "" {
		return nil, 0, nil
	}
	n, err := t.Node(last)
	return n, round, err
}

// phaseOpen reports whether phase's latest gate passed.
func phaseOpen(t Txn, q *domain.Quest, phase string) (bool, error) {
	g, _, err := latestGate(t, q, phase)
	return g != nil && g.Status == domain.Explored && g.Verdict == gates.SourcePass, err
}

// HeldRoles are the roles whose nodes wait for a phase gate: the phase
// after a gated phase whose latest gate has not passed.
func HeldRoles(t Txn, q *domain.Quest) (map[string]bool, error) {
	held := map[string]bool{}
	for _, g := range q.PhaseGates {
		next := q.NextPhase(g)
		if next == "" {
			continue
		}
		open, err := phaseOpen(t, q, g)
		if err != nil {
			return nil, err
		}
		if !open {
			held[next] = true
		}
	}
	return held, nil
}

// FirstDispatchable is the oldest pending node of q that may dispatch:
// not a council member or a gate (the council machinery runs those), not
// held by a phase gate. Without phase gates it is the oldest pending node.
func FirstDispatchable(t Txn, q *domain.Quest) (string, error) {
	if len(q.PhaseGates) == 0 {
		return t.FirstPending(q.ID), nil
	}
	heldRoles, err := HeldRoles(t, q)
	if err != nil {
		return "", err
	}
	for id := range t.PendingNodes(q.ID) {
		n, err := t.NodeHead(id)
		if err != nil {
			return "", err
		}
		if !domain.IsMember(n.Role) && !domain.IsGateRole(n.Role) && !heldRoles[n.Role] {
			return n.ID, nil
		}
	}
	return "", nil
}

// phaseBusy reports whether a node of role is not terminal yet.
func phaseBusy(t Txn, q *domain.Quest, role string) (bool, error) {
	ids, err := t.OpenNodes(q)
	if err != nil {
		return false, err
	}
	for _, id := range ids {
		n, err := t.NodeHead(id)
		if err != nil {
			return false, err
		}
		if n.Role == role {
			return true, nil
		}
	}
	return false, nil
}

// newestOf is the newest terminal node of role in q (read whole), or nil.
func newestOf(t Txn, q *domain.Quest, role string) (*domain.Node, error) {
	for id := range t.LockedNodes(q.ID) {
		h, err := t.NodeHead(id)
		if err != nil {
			return nil, err
		}
		if h.Role == role {
			return t.Node(h.ID)
		}
	}
	return nil, nil
}

// PhaseGates is a gated quest's turn at its gates, when nothing runs and
// no council sits: a gate that waits sits again, and the first phase
// whose work is done and newer than its latest gate gets a gate. It
// reports whether a gate sat (the quest's turn is then over).
func PhaseGates(t Txn, r Round, q *domain.Quest) (bool, error) {
	for _, phase := range q.PhaseGates {
		g, round, err := latestGate(t, q, phase)
		if err != nil {
			return false, err
		}
		switch {
		case g != nil && g.Status == domain.Pending:
			return true, Sit(t, r, q, g)
		case g != nil && !g.Status.Terminal():
			return false, nil // awaiting the button: later phases wait
		case g != nil && g.Status == domain.Explored && g.Verdict == gates.SourcePass:
			continue // this phase is open: look at the next
		}
		busy, err := phaseBusy(t, q, phase)
		if err != nil || busy {
			return false, err
		}
		last, err := newestOf(t, q, phase)
		if err != nil || last == nil || (g != nil && last.Order < g.Order) {
			return false, err // no work yet, or none since the last gate
		}
		if ended, err := r.Seatless(q); ended || err != nil {
			return true, err // no gate is made that cannot sit
		}
		ng, dup, err := t.NewNode(q, last, phase+domain.GateSuffix, GateHypothesis(phase, round+1), domain.Pending, domain.EdgeSpawned)
		if err != nil {
			return false, err
		}
		if dup {
			return false, fmt.Errorf("BUG: gate %q exists already as %s", GateHypothesis(phase, round+1), ng.ID)
		}
		ng.Phase = phase
		return true, Sit(t, r, q, ng)
	}
	return false, nil
}

// Sit opens the council of gate g (whole, pending) and dispatches its
// members, when the quest's budgets can seat it (else the quest ends).
func Sit(t Txn, r Round, q *domain.Quest, g *domain.Node) error {
	if ended, err := r.Seatless(q); ended || err != nil {
		return err
	}
	if g.HeadOnly {
		full, err := t.Node(g.ID)
		if err != nil {
			return err
		}
		g = full
	}
	if err := Open(t, q, g); err != nil {
		return err
	}
	return r.Council(q)
}

// gateDecided applies a gate council's decision d: a pass locks the gate
// with verdict pass (opening the next phase), or waits for the button at a
// checkpoint; anything else locks it with verdict revise and spawns a
// revision of the phase's newest node, the council's facts its feedback.
func gateDecided(t Txn, q *domain.Quest, g *domain.Node, d gates.Decision, facts []gates.Fact) error {
	ev := Evidence(d)
	g.Outcome = "PASS"
	g.ClaimHash = gates.ClaimHash([]byte(ev))
	g.AddAttempt(domain.Attempt{At: t.Now(), Outcome: "PASS", Facts: facts, ClaimHash: g.ClaimHash})
	o := &gates.OwnerAnswer{Evidence: ev}
	if d.Verdict == gates.SourcePass {
		g.Verdict = gates.SourcePass
		if err := t.Emit(domain.Event{Kind: domain.KindVerdict, Quest: q.ID, Node: g.ID, Role: g.Role, Outcome: "PASS", Facts: facts, ClaimHash: g.ClaimHash, Reason: d.Why}); err != nil {
			return err
		}
		if !q.IsCheckpoint(g.Role) {
			return t.Pass(q, g, nil, o, "PASS")
		}
		why := fmt.Sprintf("role %s is a human checkpoint", g.Role)
		g.Claim = &domain.Claim{Hash: g.ClaimHash, Raw: ev, Since: t.Now(), Facts: facts, Why: why, Reasons: []domain.ConsentReason{domain.CheckpointReason(g.Role)}, Owner: o}
		if err := t.Move(q, g, domain.AwaitingConsent, why); err != nil {
			return err
		}
		if err := t.Ledger(g, "REVIEW", facts); err != nil {
			return err
		}
		return t.Emit(domain.Event{Kind: domain.KindConsent, Quest: q.ID, Node: g.ID, Role: g.Role, Outcome: domain.ConsentRequested, ClaimHash: g.ClaimHash, Reason: why})
	}
	g.Verdict = gates.SourceRevise
	if err := t.Emit(domain.Event{Kind: domain.KindVerdict, Quest: q.ID, Node: g.ID, Role: g.Role, Outcome: "PASS", Facts: facts, ClaimHash: g.ClaimHash, Reason: d.Why}); err != nil {
		return err
	}
	if err := t.Pass(q, g, nil, o, "PASS"); err != nil {
		return err
	}
	last, err := newestOf(t, q, g.Phase)
	if err != nil {
		return err
	}
	if last == nil {
		return nil
	}
	rev, dup, err := t.NewNode(q, last, g.Phase, fmt.Sprintf("Revise after %s: %s", g.ID, domain.Truncate(last.Hypothesis, 300)), domain.Pending, "")
	if err != nil || dup {
		return err
	}
	rev.Feedback = t.Feedback(facts)
	if err := t.SaveNode(rev); err != nil {
		return err
	}
	return t.Edge(q, g.ID, rev.ID, domain.EdgeSpawned)
}
