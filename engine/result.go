package engine

import (
	"fmt"
	"strings"
	"time"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/humangate"
	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/gates"
)

// A quest's result: what it found, for people (docs/results.md). The rules
// of what counts as a finding, which gate verdict and which person let it
// lock, and how the quest ended live here once; the API's result view,
// `status` of a finished quest and the dashboard read them. An export
// (export.go) stays the machine's record of every locked node.

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

// verdictStatus is the terminal status an answer's verdict locks its node in
// (docs/design.md, "The ratchet"), and verdictFinding what that verdict
// found.
var (
	verdictStatus  = map[string]Status{gates.VerdictConclusion: Explored, gates.VerdictPromising: Growing, gates.VerdictDead: Aborted}
	verdictFinding = map[string]FindingKind{gates.VerdictConclusion: FindingConclusion, gates.VerdictPromising: FindingGrowing, gates.VerdictDead: FindingDeadEnd}
)

// FindingOf reports what n found: a worker's answer locked by its verdict,
// or a Team's deliverable (on the Team node, which locks by its executer's
// verdict). Nothing else is a finding: a Team's stage nodes (their work is
// the Team's), an owner's turn, a council member's vote, a phase gate, a
// node an owner or a person aborted, one that exhausted its tries, a Team
// that was blocked, and any node not locked yet.
func FindingOf(n *Node) (FindingKind, bool) {
	if n.Stage != "" || n.Role == RoleOwner || isMember(n.Role) || isGateRole(n.Role) {
		return "", false
	}
	k, ok := verdictFinding[n.Verdict]
	if !ok || verdictStatus[n.Verdict] != n.Status {
		return "", false
	}
	return k, true
}

// closedWithout reports whether n is a worker's node or a Team that locked
// without a finding: aborted without a verdict, exhausted, team_blocked.
func closedWithout(n *Node) bool {
	if n.Stage != "" || n.Role == RoleOwner || isMember(n.Role) || isGateRole(n.Role) || !n.Status.Terminal() {
		return false
	}
	_, found := FindingOf(n)
	return !found
}

// Reasons the engine gives a quest that ends by itself; Ending reads them.
const (
	ReasonOwnerFinished       = "owner finished: "
	ReasonStrategistConcluded = "strategist concluded: "
	ReasonNoWork              = "no work left: every node is explored, growing, aborted or exhausted"
)

// OutcomeGranted is the outcome of the attempt a person's consent adds to
// a node (Approve); consentBy starts its feedback, followed by the
// consent's source (consent.Source.Via: "button", "dashboard:USER",
// "mqtt").
const (
	OutcomeGranted = humangate.OutcomeGranted
	consentBy      = humangate.ConsentBy
)

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
func approvalOf(n *Node) *Approval {
	if n == nil || n.LastAttempt == nil || n.LastAttempt.Outcome != OutcomeGranted {
		return nil
	}
	a := n.LastAttempt
	return &Approval{Node: n.ID, Via: strings.TrimPrefix(a.Feedback, consentBy), At: a.At}
}

// Finding is one locked node's finding.
type Finding struct {
	Kind FindingKind
	// Node is the node whose answer it is: a worker's, or a Team (its
	// evidence and citations are its executer's deliverable).
	Node *Node
	// Executer and Accepter are a Team's stage nodes that delivered and
	// accepted it; nil for a worker's finding, or where the store no
	// longer has them.
	Executer, Accepter *Node
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
	Quest *Quest
	// Findings are by kind (FindingKinds' order), each kind in lock
	// order.
	Findings []Finding
	// Closed are the worker nodes and Teams locked without a finding, in
	// lock order.
	Closed []*Node
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

// Result reads what quest found: its locked nodes, in one read
// transaction. It reads every locked node of the quest once (a person
// asks for it; the tick never does).
func (e *Engine) Result(quest string) (*Result, error) {
	r := &Result{}
	err := e.store.view(func(tx *store.Tx) error {
		q, ok, err := getQuest(tx, quest)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("quest %s: %w", quest, ErrNotFound)
		}
		r.Quest = q
		return r.read(tx)
	})
	if err != nil {
		return nil, err
	}
	e.liveWall(r.Quest)
	return r, nil
}

// read fills r from the quest's locked index, in lock order.
func (r *Result) read(tx *store.Tx) error {
	var (
		byKind = map[FindingKind][]Finding{}
		stages = map[string]*Node{} // a Team's locked stage nodes, by id
		accept = map[string]*Node{} // a Team's latest accepter that accepted
		owner  *Node                // the latest owner with a closing statement
		strat  *Node                // the latest strategist's conclusion
	)
	if b := subRO(tx, bLocked, r.Quest.ID); b != nil {
		err := b.ForEach(func(_, id []byte) error {
			n, err := readNode(tx, string(id))
			if err != nil {
				return err
			}
			switch {
			case n.Stage != "":
				stages[n.ID] = n
				if n.Stage == StageAccept && n.Verdict == gates.AcceptAccept {
					accept[n.Team] = n
				}
			case n.Role == RoleOwner && n.Summary != "":
				owner = n
			case closedWithout(n):
				r.Closed = append(r.Closed, n)
			}
			k, ok := FindingOf(n)
			if !ok {
				return nil
			}
			if k == FindingConclusion && n.Role == RoleStrategist {
				strat = n
			}
			byKind[k] = append(byKind[k], Finding{Kind: k, Node: n})
			return nil
		})
		if err != nil {
			return err
		}
	}
	for _, k := range FindingKinds {
		for _, f := range byKind[k] {
			r.Findings = append(r.Findings, r.judged(f, accept, stages))
		}
	}
	r.Ending = r.ending(owner, strat)
	return nil
}

// judged fills in what the gate and a person said of f's answer: a
// worker's own, a Team's deliverable on its executer and the accept on
// its accepter.
func (r *Result) judged(f Finding, accept, stages map[string]*Node) Finding {
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
	if f.Approval != nil && r.Quest.AcceptMode == AcceptHuman {
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
// itself gives (ReasonOwnerFinished, ...), with the node that ended it.
func (r *Result) ending(owner, strat *Node) Ending {
	q := r.Quest
	d := Ending{Reason: q.Reason}
	switch {
	case q.Status == QuestActive:
		return Ending{}
	case q.Status == QuestTerminated:
		d.How = EndedByBudget
	case q.Status == QuestStopped && domain.StoppedByPerson(q.Reason):
		d.How = EndedByPerson
	case q.Status == QuestStopped:
		d.How = EndedForAttention
	case strings.HasPrefix(q.Reason, ReasonOwnerFinished):
		d.How = EndedByFinish
		// A quest finished before owners kept their statement has the
		// reason's first 200 bytes of it.
		d.Statement = strings.TrimPrefix(q.Reason, ReasonOwnerFinished)
		if owner != nil {
			d.Node, d.Statement = owner.ID, owner.Summary
		}
	case strings.HasPrefix(q.Reason, ReasonStrategistConcluded):
		d.How = EndedByStrategist
		if strat != nil {
			d.Node = strat.ID
		}
	case q.Reason == ReasonNoWork:
		d.How = EndedNoWork
	default:
		d.How = EndedDone
	}
	return d
}
