package verdict

import (
	"time"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/gates"
)

// MaxDeferrals is how many deferrals in a row a node takes while the box is
// online before the network stage's failure counts as a FAIL try.
const MaxDeferrals = 30

// Kind is what judging one answer came to.
type Kind int

const (
	Interrupted Kind = iota // cancelled: back to pending, no try
	Deferred                // network stage could not run: no try
	StopQuest               // provider misconfigured: quest stopped, no try
	Failed
	Reviewed
	Passed
)

// Judged is what judging one answer produced, as the rules apply it to
// its node inside a transaction (the engine judges outside any: it may
// wait on the network).
type Judged struct {
	Kind     Kind
	Facts    []gates.Fact
	Feedback string
	// Root is the rule id of the gate's root cause (gates.Feedback); ""
	// when the engine found the failure itself (see RootCause).
	Root string
	Why  string
	// Reasons are why a REVIEW asks a human (ConsentReason), kept with
	// the claim.
	Reasons []domain.ConsentReason
	Raw     []byte
	Claim   string
	Answer  *gates.Answer
	Owner   *gates.OwnerAnswer
	Member  *gates.MemberAnswer // a council member's answer
	// L1 is what L1 said of a Team executer's deliverable, its outcome
	// when it passed ("" for any other answer).
	L1 string
	// NoStall: the answer neither counts towards no_progress nor breaks
	// a row of it: a council member's (members who agree are no stall),
	// or a Team stage's that delivered (a plan, a deliverable, a
	// decision: the Team's pipeline moving, judged by its accepter's
	// decisions, not by its bytes).
	NoStall bool
}

// Outcome is the outcome of res as the run, the attempt and the verdict
// event name it.
func (res *Judged) Outcome() string { return OutcomeOf(res.Kind, res.L1) }

// OutcomeOf is the outcome of a result of kind k: FAIL, REVIEW, PASS (or,
// for an executer's deliverable that passed, what L1 said of it, l1),
// DEFERRED or INTERRUPTED.
func OutcomeOf(k Kind, l1 string) string {
	if k == Passed && l1 != "" {
		return l1 // an executer's deliverable: what L1 said of it
	}
	switch k {
	case Failed:
		return "FAIL"
	case Reviewed:
		return "REVIEW"
	case Passed:
		return "PASS"
	case Deferred:
		return "DEFERRED"
	}
	return "INTERRUPTED"
}

// RootCause is the rule id of a FAIL's or a REVIEW's root cause, as the
// verdict event carries it: the gate's, or, when the engine found the
// failure itself (a broken contract, a run that failed), its first failing
// fact's.
func (res *Judged) RootCause() string {
	if res.Kind != Failed && res.Kind != Reviewed {
		return ""
	}
	if res.Root != "" {
		return res.Root
	}
	for _, f := range res.Facts {
		if f.Level == gates.Fail {
			return f.Rule
		}
	}
	if len(res.Facts) > 0 {
		return res.Facts[0].Rule
	}
	return ""
}

// Txn is what the verdict's rules ask of one engine transaction: the
// ratchet's moves, the records and events it writes, and the Teams' and
// the councils' rules a verdict leads to. Every method works inside the
// one transaction; none is safe for concurrent use.
type Txn interface {
	// Now is the transaction's time.
	Now() time.Time
	Move(q *domain.Quest, n *domain.Node, to domain.Status, why string) error
	SetQuestStatus(q *domain.Quest, to domain.QuestStatus, reason string) error
	Ledger(n *domain.Node, outcome string, facts []gates.Fact) error
	Emit(ev domain.Event) error
	// Track marks q changed, to be saved with the transaction.
	Track(q *domain.Quest)
	// FollowUp asks for follow-up work on q after the transaction (a
	// retry of node).
	FollowUp(q *domain.Quest, node string)
	Node(id string) (*domain.Node, error)
	NewNode(q *domain.Quest, parent *domain.Node, role, hyp string, st domain.Status, rel string) (n *domain.Node, dup bool, err error)
	Edge(q *domain.Quest, from, to, rel string) error
	Abort(q *domain.Quest, n *domain.Node, reason string) error

	// The Teams' and the councils' rules.
	OpenTeam(q *domain.Quest, n *domain.Node) error
	AcceptConsented(q *domain.Quest, n *domain.Node, outcome string) error
	StageExhausted(q *domain.Quest, n *domain.Node) error
	MemberPass(q *domain.Quest, n *domain.Node, m *gates.MemberAnswer) error

	// MaxTries is how many FAILs a node of role may take in q, by the
	// transaction's options.
	MaxTries(q *domain.Quest, role string) int
	// OwnStallMaps gives q stall maps that it alone holds, to change.
	OwnStallMaps(q *domain.Quest)
}
