package domain

import (
	"time"

	"github.com/questbox/questbox/gates"
)

// ConsentRequest is a node waiting for a human (docs/design.md, "Authority"
// L3): what waits, why, what a yes approves, and the claim hash the press
// binds to.
type ConsentRequest struct {
	Node       string    `json:"node"`
	Quest      string    `json:"quest"`
	Role       string    `json:"role"`
	Hypothesis string    `json:"hypothesis"`
	ClaimHash  string    `json:"claim_hash"`
	Why        string    `json:"why"`
	Since      time.Time `json:"since"`
	// Team and Stage: the Team of a stage node, and its stage.
	Team  string `json:"team,omitempty"`
	Stage string `json:"stage,omitempty"`
	// Reasons are why the request was made, as the gate said it then;
	// nil for a request made before they were recorded (Why is all
	// there is of it).
	Reasons []ConsentReason `json:"reasons,omitempty"`
	// Deliverable is what a yes approves.
	Deliverable Deliverable `json:"deliverable"`
	// Deadline is when the request expires (zero: never); Expired says
	// whether it had at the time ConsentQueue was asked.
	Deadline time.Time `json:"deadline,omitzero"`
	Expired  bool      `json:"expired,omitempty"`
}

// Deliverable is the answer a consent approves: the node's own, or for a
// Team's accept the executer's deliverable that the accept hands on.
// Evidence is "" when the claim kept none (an owner's actions without
// evidence, a request of an older questbox).
type Deliverable struct {
	Node      string           `json:"node"`
	Verdict   string           `json:"verdict,omitempty"`
	Evidence  string           `json:"evidence,omitempty"`
	Citations []gates.Citation `json:"citations,omitempty"`
}

// ConsentRequested is the outcome of the consent event that a request
// makes (the others: granted, rejected, expired).
const ConsentRequested = "requested"

// The kinds of ConsentReason the engine records. The set is open: a
// reason of a kind a face does not know is shown by its Text.
const (
	// ReasonRule: a rule of the quest's gate fired at level review (Fact).
	ReasonRule = "rule"
	// ReasonJudge: the L2 judge raised doubt about a citation (Fact,
	// Source, Quote), or escalated the claim to a human.
	ReasonJudge = "judge"
	// ReasonCheckpoint: the node's role is one of the quest's
	// checkpoints (Role).
	ReasonCheckpoint = "checkpoint"
	// ReasonTeamAccept: a Team's accept waits for a human (Team): accept
	// mode human, or a deliverable the quest's L1 gate sent to review
	// (whose facts follow as ReasonRule).
	ReasonTeamAccept = "team_accept"
	// ReasonEgress: a new quest would send its material to a vendor
	// that is not local (package engine/humangate); the deliverable is what the
	// human allows.
	ReasonEgress = "egress"
)

// ConsentReason is one reason a claim waits for a human, recorded with
// the claim when the request is made, so that what the human reads is
// what the gate said, not a guess made later.
type ConsentReason struct {
	Kind string `json:"kind"`
	// Text is the reason as one line, for a face that knows no more of
	// its kind.
	Text   string      `json:"text"`
	Fact   *gates.Fact `json:"fact,omitempty"`
	Source string      `json:"source,omitempty"`
	Quote  string      `json:"quote,omitempty"`
	Role   string      `json:"role,omitempty"`
	Team   string      `json:"team,omitempty"`
}

// RuleReasons are the reasons of facts a gate gave.
func RuleReasons(facts []gates.Fact) []ConsentReason {
	var out []ConsentReason
	for _, f := range facts {
		out = append(out, ConsentReason{Kind: ReasonRule, Text: f.String(), Fact: &f})
	}
	return out
}

// CheckpointReason is the reason of a checkpoint role.
func CheckpointReason(role string) ConsentReason {
	return ConsentReason{Kind: ReasonCheckpoint, Text: "checkpoint of role " + role, Role: role}
}
