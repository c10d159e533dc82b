package verdict

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/gates"
)

// Pass moves n to passed and on to its terminal status per the agent's
// verdict, applying the quest mode's consequences (docs/design.md, "Solo and
// team modes").
func Pass(t Txn, q *domain.Quest, n *domain.Node, a *gates.Answer, o *gates.OwnerAnswer, outcome string) error {
	if n.Stage == domain.StageAccept && n.Claim != nil {
		return t.AcceptConsented(q, n, outcome)
	}
	n.Claim = nil
	if err := t.Move(q, n, domain.Passed, "gate PASS"); err != nil {
		return err
	}
	if o != nil {
		if err := ownerActions(t, q, n, o); err != nil {
			return err
		}
		if err := t.Move(q, n, domain.Explored, "owner actions applied"); err != nil {
			return err
		}
		return t.Ledger(n, outcome, n.Facts)
	}
	if a == nil {
		return fmt.Errorf("BUG: pass without an answer for node %s", n.ID)
	}
	n.Verdict, n.Evidence, n.Citations, n.NewDirections = a.Verdict, a.Evidence, a.Citations, a.NewDirections
	to := domain.VerdictStatus[a.Verdict]
	if to == "" {
		return fmt.Errorf("BUG: verdict %q passed the contract", a.Verdict)
	}
	if err := t.Move(q, n, to, "agent verdict: "+a.Verdict); err != nil {
		return err
	}
	if err := t.Ledger(n, outcome, n.Facts); err != nil {
		return err
	}
	return consequences(t, q, n, a)
}

func consequences(t Txn, q *domain.Quest, n *domain.Node, a *gates.Answer) error {
	if q.Mode == domain.ModeTeam {
		for _, d := range a.NewDirections {
			if _, _, err := t.NewNode(q, n, domain.WorkerRole(q.Roles), d, domain.Proposed, domain.EdgeProposedFrom); err != nil {
				return err
			}
		}
		return nil
	}
	switch a.Verdict {
	case gates.VerdictPromising:
		for _, d := range a.NewDirections {
			if _, _, err := t.NewNode(q, n, domain.WorkerRole(q.Roles), d, domain.Pending, domain.EdgeGrewTo); err != nil {
				return err
			}
		}
	case gates.VerdictDead:
		if q.Queued[domain.RoleStrategist] != "" || !slices.Contains(q.Roles, domain.RoleStrategist) {
			return nil
		}
		hyp := fmt.Sprintf("Re-plan %q after the dead end %q (node %s, round %d)", q.Direction, domain.Truncate(n.Hypothesis, 80), n.ID, q.Counters.AgentRuns)
		_, _, err := t.NewNode(q, n, domain.RoleStrategist, hyp, domain.Pending, domain.EdgeAbortedTo)
		return err
	case gates.VerdictConclusion:
		if n.Role == domain.RoleStrategist && q.Status == domain.QuestActive {
			return t.SetQuestStatus(q, domain.QuestDone, domain.ReasonStrategistConcluded+domain.Truncate(a.Evidence, 200))
		}
	}
	return nil
}

// ownerActions validates and applies an owner's actions. An invalid action
// is recorded as a fact on the owner node and never applied.
func ownerActions(t Txn, q *domain.Quest, owner *domain.Node, o *gates.OwnerAnswer) error {
	owner.Evidence = o.Evidence
	finish := ""
	for i, a := range o.Actions {
		var why string
		var err error
		switch a.Action {
		case "promote", "abort":
			why, err = ownerOnNode(t, q, owner, a)
		case "spawn":
			why, err = ownerSpawn(t, q, owner, a)
		case "finish":
			finish = a.Summary
			if finish == "" {
				finish = "finished by owner"
			}
		default:
			why = fmt.Sprintf("unknown action %q", a.Action)
		}
		if err != nil {
			return err
		}
		if why != "" {
			owner.Facts = append(owner.Facts, gates.Fact{Rule: "owner-action", Level: gates.Review,
				Where: fmt.Sprintf("actions[%d] (%s %s)", i, a.Action, a.Node), Expected: "a valid action", Actual: why + "; not applied"})
		}
	}
	if finish != "" && q.Status == domain.QuestActive {
		owner.Summary = finish
		return t.SetQuestStatus(q, domain.QuestDone, domain.ReasonOwnerFinished+domain.Truncate(finish, 200))
	}
	return nil
}

// ownerOnNode applies an owner's promote or abort of one node of its quest.
// It returns why the action was not applied, or "" when it was.
func ownerOnNode(t Txn, q *domain.Quest, owner *domain.Node, a gates.Action) (string, error) {
	n, err := t.Node(a.Node)
	if errors.Is(err, domain.ErrNotFound) {
		return "no such node", nil
	} else if err != nil {
		return "", err
	}
	switch {
	case n.Quest != q.ID:
		return fmt.Sprintf("node %s belongs to quest %s", n.ID, n.Quest), nil
	case n.ID == owner.ID:
		return "an owner cannot act on itself", nil
	case a.Action == "promote" && n.Status != domain.Proposed:
		return fmt.Sprintf("node %s is %s; only a proposed node can be promoted", n.ID, n.Status), nil
	case a.Action == "promote":
		if err := t.Move(q, n, domain.Pending, "promoted by owner "+owner.ID); err != nil {
			return "", err
		}
		if err := t.Edge(q, owner.ID, n.ID, domain.EdgePromoted); err != nil {
			return "", err
		}
		if q.Teams {
			return "", t.OpenTeam(q, n)
		}
		return "", nil
	case n.Status.Terminal() || n.Status == domain.Running:
		return fmt.Sprintf("node %s is %s and cannot be aborted now", n.ID, n.Status), nil
	}
	reason := "aborted by owner " + owner.ID
	if a.Reason != "" {
		reason += ": " + a.Reason
	}
	return "", t.Abort(q, n, reason)
}

// ownerSpawn applies an owner's spawn of a new hypothesis under a worker
// role. It returns why the action was not applied, or "" when it was.
func ownerSpawn(t Txn, q *domain.Quest, owner *domain.Node, a gates.Action) (string, error) {
	role := a.Role
	if role == "" {
		role = domain.WorkerRole(q.Roles)
	}
	if !slices.Contains(q.Roles, role) || role == domain.RoleOwner {
		return fmt.Sprintf("role %q is not a worker role of this quest", role), nil
	}
	if strings.TrimSpace(a.Hypothesis) == "" {
		return "empty hypothesis", nil
	}
	n, dup, err := t.NewNode(q, owner, role, a.Hypothesis, domain.Pending, domain.EdgeSpawned)
	if err != nil {
		return "", err
	}
	if dup {
		return fmt.Sprintf("the quest already has this hypothesis as node %s", n.ID), nil
	}
	if q.Teams {
		return "", t.OpenTeam(q, n)
	}
	return "", nil
}
