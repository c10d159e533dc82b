package humangate

import (
	"errors"
	"fmt"
	"time"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/gates"
	"github.com/questbox/questbox/gates/consent"
)

// Txn is what the consent queue's rules ask of one engine transaction:
// read, save and move nodes under the ratchet, create the egress consent
// node, record outcomes, and hand a decided node on to the verdict it
// was waiting for. It is used from one goroutine, the transaction's, and
// its writes land when the transaction commits.
type Txn interface {
	// Now is the transaction's time, the one its attempts record.
	Now() time.Time
	// AwaitingConsent lists the nodes in the consent index: those that
	// wait for a human.
	AwaitingConsent() ([]string, error)
	Node(id string) (*domain.Node, error)
	Quest(id string) (*domain.Quest, error)
	SaveNode(n *domain.Node) error
	Move(q *domain.Quest, n *domain.Node, to domain.Status, why string) error
	NewNodeWith(q *domain.Quest, parent *domain.Node, role, hyp string, st domain.Status, rel string, init func(*domain.Node)) (n *domain.Node, dup bool, err error)
	Emit(ev domain.Event) error
	Ledger(n *domain.Node, outcome string, facts []gates.Fact) error
	Track(q *domain.Quest)
	SetQuestStatus(q *domain.Quest, to domain.QuestStatus, reason string) error
	Pass(q *domain.Quest, n *domain.Node, a *gates.Answer, o *gates.OwnerAnswer, outcome string) error
	FailTry(q *domain.Quest, n *domain.Node, outcome string) error
	// HumanRejectsAccept applies a human's rejection of a Team's accept
	// held on the accepter n (the Team's rules).
	HumanRejectsAccept(q *domain.Quest, n *domain.Node, by string) error
}

// Request is the request of n, which awaits consent; node reads another
// node of the same view. A Team's accept approves its executer's
// deliverable: that node is read too.
func Request(n *domain.Node, node func(id string) (*domain.Node, error)) (domain.ConsentRequest, error) {
	c := n.Claim
	if c == nil {
		return domain.ConsentRequest{}, fmt.Errorf("BUG: node %s awaits consent without a claim", n.ID)
	}
	r := domain.ConsentRequest{Node: n.ID, Quest: n.Quest, Role: n.Role, Hypothesis: n.Hypothesis, ClaimHash: c.Hash, Why: c.Why,
		Since: c.Since, Team: n.Team, Stage: n.Stage, Reasons: c.Reasons, Deliverable: domain.Deliverable{Node: n.ID}}
	switch {
	case n.Stage == domain.StageAccept && n.Parent != "":
		exec, err := node(n.Parent)
		if err != nil {
			return r, err
		}
		r.Deliverable = domain.Deliverable{Node: exec.ID, Verdict: exec.Verdict, Evidence: exec.Evidence, Citations: exec.Citations}
	case n.Role == domain.RoleEgress:
		r.Deliverable.Evidence = c.Raw // what the quest may send, and to whom
	case c.Answ != nil:
		r.Deliverable.Verdict, r.Deliverable.Evidence, r.Deliverable.Citations = c.Answ.Verdict, c.Answ.Evidence, c.Answ.Citations
	case c.Owner != nil:
		r.Deliverable.Evidence = c.Owner.Evidence
	}
	return r, nil
}

// target loads a node awaiting consent and checks that c was given
// for exactly its current claim.
func target(t Txn, node string, c consent.Consent) (*domain.Quest, *domain.Node, error) {
	n, err := t.Node(node)
	if err != nil {
		return nil, nil, err
	}
	if n.Status.Terminal() {
		return nil, nil, fmt.Errorf("node %s is %s: %w", n.ID, n.Status, domain.ErrLocked)
	}
	if n.Status != domain.AwaitingConsent || n.Claim == nil {
		return nil, nil, fmt.Errorf("node %s is %s, not awaiting consent: %w", n.ID, n.Status, domain.ErrIllegalMove)
	}
	if err := c.For(n.Claim.Hash); err != nil {
		if errors.Is(err, consent.ErrWrongClaim) {
			return nil, nil, fmt.Errorf("node %s: consent for claim %.12s, current claim is %.12s: %w", n.ID, c.ClaimHash(), n.Claim.Hash, domain.ErrStaleConsent)
		}
		return nil, nil, fmt.Errorf("node %s: %w", n.ID, err)
	}
	q, err := t.Quest(n.Quest)
	return q, n, err
}

// Approve applies human consent (L3) to the node's claim: the node
// continues to its verdict exactly as a PASS would (a quest's egress
// consent lets its quest run: egress.go). Only the consent path
// (the button, or an authenticated dashboard the owner enabled) can make a
// consent.Consent, and it names the claim hash that was shown: a consent
// for any other claim is ErrStaleConsent.
func Approve(t Txn, node string, c consent.Consent) error {
	by := c.Via()
	q, n, err := target(t, node, c)
	if err != nil {
		return err
	}
	if n.Role == domain.RoleEgress {
		return egressDecided(t, q, n, true, by)
	}
	claim := n.Claim
	n.AddAttempt(domain.Attempt{At: t.Now(), Outcome: domain.OutcomeGranted, ClaimHash: claim.Hash, Feedback: domain.ConsentBy + by})
	if err := t.Emit(domain.Event{Kind: domain.KindConsent, Quest: q.ID, Node: n.ID, Role: n.Role, Outcome: domain.OutcomeGranted, ClaimHash: claim.Hash, Reason: domain.ConsentBy + by}); err != nil {
		return err
	}
	return t.Pass(q, n, claim.Answ, claim.Owner, "CONSENT")
}

// Reject refuses the claim: a FAIL try with the fact "rejected by human".
func Reject(t Txn, node string, c consent.Consent) error {
	by, claimHash := c.Via(), c.ClaimHash()
	q, n, err := target(t, node, c)
	if err != nil {
		return err
	}
	if n.Role == domain.RoleEgress {
		return egressDecided(t, q, n, false, by)
	}
	f := gates.Fact{Rule: "human", Level: gates.Fail, Where: "consent", Expected: "approval", Actual: "rejected by human (" + by + ")"}
	n.Claim = nil
	n.Outcome, n.Facts, n.Feedback = "FAIL", []gates.Fact{f}, "rejected by human"
	n.AddAttempt(domain.Attempt{At: t.Now(), Outcome: "rejected", Facts: n.Facts, Feedback: n.Feedback, ClaimHash: claimHash, TryUsed: true})
	if err := t.Emit(domain.Event{Kind: domain.KindConsent, Quest: q.ID, Node: n.ID, Role: n.Role, Outcome: "rejected", ClaimHash: claimHash, Reason: "rejected by " + by}); err != nil {
		return err
	}
	if n.Stage == domain.StageAccept {
		return t.HumanRejectsAccept(q, n, by)
	}
	return t.FailTry(q, n, "REJECTED")
}

// Expired is the one rule of consent expiry: a request made at since
// has expired at now when expiry is positive and at least that long has
// passed.
func Expired(since, now time.Time, expiry time.Duration) bool {
	return expiry > 0 && !now.Before(since.Add(expiry))
}

// Deadline returns when r expires; false when requests never expire
// (expiry is 0).
func Deadline(r domain.ConsentRequest, expiry time.Duration) (time.Time, bool) {
	if expiry <= 0 {
		return time.Time{}, false
	}
	return r.Since.Add(expiry), true
}

// Expire moves requests older than expiry back to pending (no try
// consumed) with a consent "expired" event, and asks a quest's egress
// consent again (egress.go). It returns how many expired. The consent
// index holds only the nodes awaiting a human, so this is cheap on every
// tick.
func Expire(t Txn, expiry time.Duration) (int, error) {
	if expiry <= 0 {
		return 0, nil
	}
	ids, err := t.AwaitingConsent()
	if err != nil {
		return 0, err
	}
	expired := 0
	for _, id := range ids {
		n, err := t.Node(id)
		if err != nil {
			return expired, err
		}
		if n.Claim == nil || !Expired(n.Claim.Since, t.Now(), expiry) {
			continue
		}
		q, err := t.Quest(n.Quest)
		if err != nil {
			return expired, err
		}
		if n.Role == domain.RoleEgress {
			if err := egressAsked(t, q, n, expiry.String()); err != nil {
				return expired, err
			}
			expired++
			continue
		}
		hash := n.Claim.Hash
		why := fmt.Sprintf("no human answered within %s", expiry)
		n.Claim = nil
		n.AddAttempt(domain.Attempt{At: t.Now(), Outcome: "expired", ClaimHash: hash, Feedback: why})
		if err := t.Emit(domain.Event{Kind: domain.KindConsent, Quest: q.ID, Node: n.ID, Role: n.Role, Outcome: "expired", ClaimHash: hash, Reason: why}); err != nil {
			return expired, err
		}
		if err := t.Move(q, n, domain.Pending, "consent expired: "+why); err != nil {
			return expired, err
		}
		if err := t.Ledger(n, "EXPIRED", nil); err != nil {
			return expired, err
		}
		expired++
	}
	return expired, nil
}
