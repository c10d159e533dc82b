package findings

import (
	"strings"
	"time"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/gates"
)

// FindingKind is what a locked node found.
type FindingKind string

// The kinds of finding, in the order a result lists them.
const (
	// FindingConclusion: the answer settles its hypothesis (explored).
	FindingConclusion FindingKind = "conclusion"
	// FindingGrowing: the answer found the direction worth going on with
	// (growing); its new directions are nodes of their own.
	FindingGrowing FindingKind = "growing"
	// FindingDeadEnd: the answer found the direction closed (aborted by
	// its verdict dead).
	FindingDeadEnd FindingKind = "dead_end"
)

// FindingKinds lists the kinds in the order a result lists them.
var FindingKinds = []FindingKind{FindingConclusion, FindingGrowing, FindingDeadEnd}

// verdictFinding is what an answer's verdict found.
var (
	verdictFinding = map[string]FindingKind{gates.VerdictConclusion: FindingConclusion, gates.VerdictPromising: FindingGrowing, gates.VerdictDead: FindingDeadEnd}
)

// FindingOf reports what n found: a worker's answer locked by its verdict,
// or a Team's deliverable (on the Team node, which locks by its executer's
// verdict). Nothing else is a finding: a Team's stage nodes (their work is
// the Team's), an owner's turn, a council member's vote, a phase gate, a
// node an owner or a person aborted, one that exhausted its tries, a Team
// that was blocked, and any node not locked yet.
func FindingOf(n *domain.Node) (FindingKind, bool) {
	if n.Stage != "" || n.Role == domain.RoleOwner || domain.IsMember(n.Role) || domain.IsGateRole(n.Role) {
		return "", false
	}
	k, ok := verdictFinding[n.Verdict]
	if !ok || domain.VerdictStatus[n.Verdict] != n.Status {
		return "", false
	}
	return k, true
}

// ClosedWithout reports whether n is a worker's node or a Team that locked
// without a finding: aborted without a verdict, exhausted, team_blocked.
func ClosedWithout(n *domain.Node) bool {
	if n.Stage != "" || n.Role == domain.RoleOwner || domain.IsMember(n.Role) || domain.IsGateRole(n.Role) || !n.Status.Terminal() {
		return false
	}
	_, found := FindingOf(n)
	return !found
}

// Approval is a person's consent that let a finding lock.
type Approval struct {
	// Node is where the consent was given: the finding's own node, or
	// its Team's accepter.
	Node string
	// Via is the consent's source: "button", "dashboard:USER", "mqtt".
	Via string
	At  time.Time
}

// approvalOf is the consent n's last attempt records, or nil.
func approvalOf(n *domain.Node) *Approval {
	if n == nil || n.LastAttempt == nil || n.LastAttempt.Outcome != domain.OutcomeGranted {
		return nil
	}
	a := n.LastAttempt
	return &Approval{Node: n.ID, Via: strings.TrimPrefix(a.Feedback, domain.ConsentBy), At: a.At}
}

// Finding is one locked node's finding.
type Finding struct {
	Kind FindingKind
	// Node is the node whose answer it is: a worker's, or a Team (its
	// evidence and citations are its executer's deliverable).
	Node *domain.Node
	// Executer and Accepter are a Team's stage nodes that delivered and
	// accepted it; nil for a worker's finding, or where the store no
	// longer has them.
	Executer, Accepter *domain.Node
	// Gate is what the quest's gate said of the answer (of a Team's
	// deliverable): PASS, or REVIEW, which a person then approved.
	Gate string
	// Review are the facts the gate asked for review with; empty for a
	// PASS, and for a REVIEW a checkpoint made (Why says so).
	Review []gates.Fact
	// Why says why a person had to look, when no fact says it: a
	// checkpoint role, a Team whose accept is a person's.
	Why string
	// Approval is the person's consent that let it lock; nil when the
	// gate's PASS alone did.
	Approval *Approval
}

// EndingHow is how a quest came to its present rest.
type EndingHow string

// How a quest ends or rests. An active quest has none ("").
const (
	EndedByFinish     EndingHow = "finish"     // its owner's finish action
	EndedByStrategist EndingHow = "strategist" // a strategist's conclusion
	EndedNoWork       EndingHow = "no_work"    // no node left to run
	EndedDone         EndingHow = "done"       // done, for a reason of an older questbox
	EndedByBudget     EndingHow = "budget"     // a budget ran out: terminated
	EndedByPerson     EndingHow = "stopped"    // a person paused it (it may resume)
	EndedForAttention EndingHow = "attention"  // stopped by itself: no progress, a broken provider
)

// Ending is how a quest ended, or why it rests.
type Ending struct {
	How    EndingHow
	Reason string // the quest's reason, as its status shows it
	// Node ended it: the owner whose finish action it was, the
	// strategist whose conclusion it was.
	Node string
	// Statement is the owner's closing statement: its finish action's
	// summary, whole.
	Statement string
}

// Result is what a quest found, as of one read.
type Result struct {
	Quest *domain.Quest
	// Findings are by kind (FindingKinds' order), each kind in lock
	// order.
	Findings []Finding
	// Closed are the worker nodes and Teams locked without a finding, in
	// lock order.
	Closed []*domain.Node
	Ending Ending
}

// Count returns how many findings of kind r has.
func (r *Result) Count(kind FindingKind) int {
	c := 0
	for i := range r.Findings {
		if r.Findings[i].Kind == kind {
			c++
		}
	}
	return c
}

// Of is what quest q found: its locked nodes, in lock order, read into
// findings by kind, the nodes locked without one, and how it ended.
func Of(q *domain.Quest, locked []*domain.Node) *Result {
	r := &Result{Quest: q}
	var (
		byKind = map[FindingKind][]Finding{}
		stages = map[string]*domain.Node{} // a Team's locked stage nodes, by id
		accept = map[string]*domain.Node{} // a Team's latest accepter that accepted
		owner  *domain.Node                // the latest owner with a closing statement
		strat  *domain.Node                // the latest strategist's conclusion
	)
	for _, n := range locked {
		switch {
		case n.Stage != "":
			stages[n.ID] = n
			if n.Stage == domain.StageAccept && n.Verdict == gates.AcceptAccept {
				accept[n.Team] = n
			}
		case n.Role == domain.RoleOwner && n.Summary != "":
			owner = n
		case ClosedWithout(n):
			r.Closed = append(r.Closed, n)
		}
		k, ok := FindingOf(n)
		if !ok {
			continue
		}
		if k == FindingConclusion && n.Role == domain.RoleStrategist {
			strat = n
		}
		byKind[k] = append(byKind[k], Finding{Kind: k, Node: n})
	}
	for _, k := range FindingKinds {
		for _, f := range byKind[k] {
			r.Findings = append(r.Findings, r.judged(f, accept, stages))
		}
	}
	r.Ending = r.ending(owner, strat)
	return r
}

// judged fills in what the gate and a person said of f's answer: a
// worker's own, a Team's deliverable on its executer and the accept on
// its accepter.
func (r *Result) judged(f Finding, accept, stages map[string]*domain.Node) Finding {
	n := f.Node
	if n.TeamKind == "" {
		f.Gate, f.Approval = n.Outcome, approvalOf(n)
		f.Review = reviewFacts(n.Outcome, n.Facts)
		if f.Gate == "REVIEW" && len(f.Review) == 0 && r.Quest.IsCheckpoint(n.Role) {
			f.Why = "role " + n.Role + " is a human checkpoint"
		}
		return f
	}
	f.Accepter = accept[n.ID]
	if f.Accepter != nil {
		f.Executer = stages[f.Accepter.Parent]
		f.Approval = approvalOf(f.Accepter)
	}
	if x := f.Executer; x != nil {
		f.Gate = x.Outcome
		f.Review = reviewFacts(x.Outcome, x.Facts)
	}
	if f.Approval != nil && r.Quest.AcceptMode == domain.AcceptHuman {
		f.Why = "the Team's accept is a person's (accept mode human)"
	}
	return f
}

// reviewFacts are the facts a REVIEW asked a person about.
func reviewFacts(outcome string, facts []gates.Fact) []gates.Fact {
	if outcome != "REVIEW" {
		return nil
	}
	var out []gates.Fact
	for _, f := range facts {
		if f.Level == gates.Review {
			out = append(out, f)
		}
	}
	return out
}

// ending says how r's quest ended or why it rests: the reasons the engine
// itself gives (domain.ReasonOwnerFinished, ...), with the node that ended it.
func (r *Result) ending(owner, strat *domain.Node) Ending {
	q := r.Quest
	d := Ending{Reason: q.Reason}
	switch {
	case q.Status == domain.QuestActive:
		return Ending{}
	case q.Status == domain.QuestTerminated:
		d.How = EndedByBudget
	case q.Status == domain.QuestStopped && domain.StoppedByPerson(q.Reason):
		d.How = EndedByPerson
	case q.Status == domain.QuestStopped:
		d.How = EndedForAttention
	case strings.HasPrefix(q.Reason, domain.ReasonOwnerFinished):
		d.How = EndedByFinish
		// A quest finished before owners kept their statement has the
		// reason's first 200 bytes of it.
		d.Statement = strings.TrimPrefix(q.Reason, domain.ReasonOwnerFinished)
		if owner != nil {
			d.Node, d.Statement = owner.ID, owner.Summary
		}
	case strings.HasPrefix(q.Reason, domain.ReasonStrategistConcluded):
		d.How = EndedByStrategist
		if strat != nil {
			d.Node = strat.ID
		}
	case q.Reason == domain.ReasonNoWork:
		d.How = EndedNoWork
	default:
		d.How = EndedDone
	}
	return d
}
