package api

import "github.com/questbox/questbox/engine"

// A quest's Teams and councils as every face shows them (docs/design.md,
// "Councils and Teams", "The dashboard and the API"): a Team folded into one
// line with its stage strip, a council under its owner with each member's
// provider and vote. The rules that read them from the nodes live here once;
// `quest show` and the dashboard render these views and decide nothing of
// their own.

// Team is a Team node with the strip of its stage nodes, oldest first.
type Team struct {
	ID            string      `json:"id"`
	Kind          string      `json:"kind"` // team_kind: scout, poc, strategist, custom
	Status        NodeStatus  `json:"status"`
	Hypothesis    string      `json:"hypothesis"`
	RevisionCount int         `json:"revision_count"`
	MaxRevisions  int         `json:"max_revisions"`
	Stages        []StageMark `json:"stages"`
}

// StageMark is one stage node of a Team's strip.
type StageMark struct {
	ID            string     `json:"id"`
	Stage         string     `json:"stage"` // plan, exec, accept
	Status        NodeStatus `json:"status"`
	Mark          Mark       `json:"mark"`
	RevisionCount int        `json:"revision_count"`
}

// Mark is how a stage ended, or that it has not.
type Mark string

// Marks of a stage: done (✓), rejected by the accepter (✗), failed (its
// tries exhausted or aborted, ✗), running (…), waiting (·).
const (
	MarkDone     Mark = "done"
	MarkRejected Mark = "rejected"
	MarkFailed   Mark = "failed"
	MarkRunning  Mark = "running"
	MarkWaiting  Mark = "waiting"
)

// Symbol is the mark as one character for text and the strip.
func (m Mark) Symbol() string {
	switch m {
	case MarkDone:
		return "✓"
	case MarkRejected, MarkFailed:
		return "✗"
	case MarkRunning:
		return "…"
	}
	return "·"
}

// Verdicts an accepter's node carries (the answer's verdict).
const (
	VerdictAccept = "accept"
	VerdictReject = "reject"
)

// markOf is the one rule for a stage's mark.
func markOf(n Node) Mark {
	switch {
	case n.Verdict == VerdictReject:
		return MarkRejected
	case n.Status == NodeRunning:
		return MarkRunning
	case n.Status == NodeExhausted || n.Status == NodeAborted:
		return MarkFailed
	case n.Terminal || n.Status == NodePassed:
		return MarkDone
	}
	return MarkWaiting
}

// OwnerCouncil is an owner node with the council that deliberates its
// turn: the members it spawned (council_of), oldest first.
type OwnerCouncil struct {
	Owner   string       `json:"owner"`
	Status  NodeStatus   `json:"status"`
	Phase   string       `json:"phase,omitempty"`
	Members []MemberVote `json:"members"`
}

// MemberVote is one council member: its role (reviewer, judge), its
// provider, and its vote once it answered — a judge's verdict_source
// (pass, revise), as its node's verdict — and its dissent, if any.
type MemberVote struct {
	ID       string     `json:"id"`
	Role     string     `json:"role"`
	Provider string     `json:"provider"`
	Status   NodeStatus `json:"status"`
	Vote     string     `json:"vote,omitempty"`
	Replied  bool       `json:"replied"` // its council_reply edge exists: the engine merged its answer
	Dissent  string     `json:"dissent,omitempty"`
}

// fold returns the Teams and councils of a quest's nodes and edges, nil
// for a quest that has none (a v1 or v2 quest's detail is unchanged).
func fold(q *engine.Quest, nodes []Node, edges []Edge) ([]Team, []OwnerCouncil) {
	byID := make(map[string]*Node, len(nodes))
	for i := range nodes {
		byID[nodes[i].ID] = &nodes[i]
	}
	var teams []Team
	at := map[string]int{}
	for _, n := range nodes {
		if n.TeamKind == "" {
			continue
		}
		limit := n.MaxRevisions
		if limit == 0 {
			limit = q.MaxRevisions
		}
		at[n.ID] = len(teams)
		teams = append(teams, Team{ID: n.ID, Kind: n.TeamKind, Status: n.Status, Hypothesis: n.Hypothesis,
			RevisionCount: n.RevisionCount, MaxRevisions: limit, Stages: []StageMark{}})
	}
	for _, n := range nodes {
		if i, ok := at[n.Team]; ok && n.Stage != "" {
			teams[i].Stages = append(teams[i].Stages, StageMark{ID: n.ID, Stage: n.Stage, Status: n.Status, Mark: markOf(n),
				RevisionCount: n.RevisionCount})
		}
	}
	var councils []OwnerCouncil
	cat := map[string]int{}
	replied := map[[2]string]bool{}
	for _, e := range edges {
		if e.Relation == RelCouncilReply {
			replied[[2]string{e.From, e.To}] = true
		}
	}
	for _, e := range edges {
		if e.Relation != RelCouncilOf || byID[e.From] == nil || byID[e.To] == nil {
			continue
		}
		owner, m := byID[e.From], byID[e.To]
		i, ok := cat[owner.ID]
		if !ok {
			i = len(councils)
			cat[owner.ID] = i
			councils = append(councils, OwnerCouncil{Owner: owner.ID, Status: owner.Status, Phase: owner.Phase})
		}
		councils[i].Members = append(councils[i].Members, MemberVote{ID: m.ID, Role: m.Role, Provider: m.Provider, Status: m.Status,
			Vote: m.Verdict, Replied: replied[[2]string{m.ID, owner.ID}], Dissent: dissentOf(*m, *owner)})
	}
	return teams, councils
}

// dissentOf is member m's dissent: its own dissent fact, else its owner's
// naming it.
func dissentOf(m, owner Node) string {
	for _, f := range m.Facts {
		if f.Rule == engine.RuleCouncilDissent {
			return f.Actual
		}
	}
	for _, f := range owner.Facts {
		if f.Rule == engine.RuleCouncilDissent && f.Where == m.ID {
			return f.Actual
		}
	}
	return ""
}

// DetailView is the view of quest q with its whole graph: its nodes and
// edges, and its Teams and councils folded.
func DetailView(q *engine.Quest, nodes []*engine.Node, edges []engine.Edge) QuestDetail {
	v := QuestDetail{Quest: QuestView(q), Nodes: make([]Node, len(nodes)), Edges: edgesView(edges)}
	for i, n := range nodes {
		v.Nodes[i] = NodeView(n)
	}
	v.Teams, v.Councils = fold(q, v.Nodes, v.Edges)
	return v
}
