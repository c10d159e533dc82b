package domain

import (
	"slices"
	"strings"

	"github.com/questbox/questbox/gates"
)

// Finished reports whether the quest ended for good: done, or terminated
// by a budget. A stopped quest may resume.
func (q *Quest) Finished() bool { return q.Status == QuestDone || q.Status == QuestTerminated }

// ProviderFor is the provider that runs n: the node's own (a council
// member's), else the quest's provider for n's role, else the quest's.
func (q *Quest) ProviderFor(n *Node) string {
	if n.Provider != "" {
		return n.Provider
	}
	if p := q.RoleProviders[n.Role]; p != "" {
		return p
	}
	return q.Provider
}

// UsesRole reports whether q dispatches nodes of role: one of its roles,
// a council member's when it has a council, a Team stage's when it has
// Teams.
func (q *Quest) UsesRole(role string) bool {
	switch role {
	case RoleReviewer, RoleJudge:
		return len(q.CouncilReviewers)+len(q.CouncilJudges) > 0
	case RolePlanner, RoleExecuter, RoleAccepter:
		return q.Teams
	}
	return slices.Contains(q.Roles, role)
}

// NextPhase is the phase after phase: the next role of the quest's roles,
// in their order, other than owner; "" after the last.
func (q *Quest) NextPhase(phase string) string {
	i := slices.Index(q.Roles, phase)
	if i < 0 {
		return ""
	}
	for _, r := range q.Roles[i+1:] {
		if r != RoleOwner {
			return r
		}
	}
	return ""
}

// HasRole reports whether r is one of q's roles.
func (q *Quest) HasRole(r string) bool {
	for _, x := range q.Roles {
		if x == r {
			return true
		}
	}
	return false
}

// VerdictStatus is the terminal status an answer's verdict locks its node
// in (docs/design.md, "The ratchet").
var VerdictStatus = map[string]Status{gates.VerdictConclusion: Explored, gates.VerdictPromising: Growing, gates.VerdictDead: Aborted}

// Reasons the engine gives a quest that ends by itself; Ending reads them.
const (
	ReasonOwnerFinished       = "owner finished: "
	ReasonStrategistConcluded = "strategist concluded: "
	ReasonNoWork              = "no work left: every node is explored, growing, aborted or exhausted"
)

// OutcomeGranted is the outcome of the attempt a person's consent adds to
// a node (Approve); ConsentBy starts its feedback, followed by the
// consent's source (consent.Source.Via: "button", "dashboard:USER",
// "mqtt").
const (
	OutcomeGranted = "granted"
	ConsentBy      = "consent by "
)

// GateSuffix ends the role of a phase gate: "scout_gate".
const GateSuffix = "_gate"

// IsGateRole reports whether role is a phase gate's.
func IsGateRole(role string) bool { return strings.HasSuffix(role, GateSuffix) }

// IsMember reports whether role is a council member's.
func IsMember(role string) bool { return role == RoleReviewer || role == RoleJudge }

// Truncate cuts s to at most n bytes, on a rune's boundary, and marks the
// cut with "…": one rule for every text the engine shortens (a reason, a
// hypothesis, a prompt's evidence).
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
