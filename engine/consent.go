package engine

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/gates"
	"github.com/questbox/questbox/gates/consent"
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
	// that is not local (egressconsent.go); the deliverable is what the
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

// ruleReasons are the reasons of facts a gate gave.
func ruleReasons(facts []gates.Fact) []ConsentReason {
	var out []ConsentReason
	for _, f := range facts {
		out = append(out, ConsentReason{Kind: ReasonRule, Text: f.String(), Fact: &f})
	}
	return out
}

// checkpointReason is the reason of a checkpoint role.
func checkpointReason(role string) ConsentReason {
	return ConsentReason{Kind: ReasonCheckpoint, Text: "checkpoint of role " + role, Role: role}
}

// Consents returns the nodes awaiting consent, oldest request first, each
// with its deadline (Expired is ConsentQueue's to say).
func (e *Engine) Consents() ([]ConsentRequest, error) {
	var out []ConsentRequest
	err := e.store.view(func(tx *store.Tx) error {
		return tx.Consent().ForEach(func(k, _ []byte) error {
			n, err := readNode(tx, string(k))
			if err != nil {
				return err
			}
			r, err := consentRequest(tx, n)
			if err != nil {
				return err
			}
			if d, ok := e.ConsentDeadline(r); ok {
				r.Deadline = d
			}
			out = append(out, r)
			return nil
		})
	})
	slices.SortStableFunc(out, func(a, b ConsentRequest) int { return a.Since.Compare(b.Since) })
	return out, err
}

// ConsentQueue is the consent queue at now: Consents, each request saying
// whether it has expired. It is the one rule of what the button still
// offers, which the box, the activity count and every face of the API
// read.
func (e *Engine) ConsentQueue(now time.Time) ([]ConsentRequest, error) {
	reqs, err := e.Consents()
	for i := range reqs {
		reqs[i].Expired = e.ConsentExpired(reqs[i], now)
	}
	return reqs, err
}

// consentRequest is the request of n, which awaits consent. A Team's
// accept approves its executer's deliverable: that node is read too.
func consentRequest(tx *store.Tx, n *Node) (ConsentRequest, error) {
	c := n.Claim
	if c == nil {
		return ConsentRequest{}, fmt.Errorf("BUG: node %s awaits consent without a claim", n.ID)
	}
	r := ConsentRequest{Node: n.ID, Quest: n.Quest, Role: n.Role, Hypothesis: n.Hypothesis, ClaimHash: c.Hash, Why: c.Why,
		Since: c.Since, Team: n.Team, Stage: n.Stage, Reasons: c.Reasons, Deliverable: Deliverable{Node: n.ID}}
	switch {
	case n.Stage == StageAccept && n.Parent != "":
		exec, err := readNode(tx, n.Parent)
		if err != nil {
			return r, err
		}
		r.Deliverable = Deliverable{Node: exec.ID, Verdict: exec.Verdict, Evidence: exec.Evidence, Citations: exec.Citations}
	case n.Role == RoleEgress:
		r.Deliverable.Evidence = c.Raw // what the quest may send, and to whom
	case c.Answ != nil:
		r.Deliverable.Verdict, r.Deliverable.Evidence, r.Deliverable.Citations = c.Answ.Verdict, c.Answ.Evidence, c.Answ.Citations
	case c.Owner != nil:
		r.Deliverable.Evidence = c.Owner.Evidence
	}
	return r, nil
}

// consentTarget loads a node awaiting consent and checks that c was given
// for exactly its current claim.
func (t *txn) consentTarget(node string, c consent.Consent) (*Quest, *Node, error) {
	n, err := t.node(node)
	if err != nil {
		return nil, nil, err
	}
	if n.Status.Terminal() {
		return nil, nil, fmt.Errorf("node %s is %s: %w", n.ID, n.Status, ErrLocked)
	}
	if n.Status != AwaitingConsent || n.Claim == nil {
		return nil, nil, fmt.Errorf("node %s is %s, not awaiting consent: %w", n.ID, n.Status, ErrIllegalMove)
	}
	if err := c.For(n.Claim.Hash); err != nil {
		if errors.Is(err, consent.ErrWrongClaim) {
			return nil, nil, fmt.Errorf("node %s: consent for claim %.12s, current claim is %.12s: %w", n.ID, c.ClaimHash(), n.Claim.Hash, ErrStaleConsent)
		}
		return nil, nil, fmt.Errorf("node %s: %w", n.ID, err)
	}
	q, err := t.quest(n.Quest)
	return q, n, err
}

// Approve applies human consent (L3) to the node's claim: the node
// continues to its verdict exactly as a PASS would (a quest's egress
// consent lets its quest run: egressconsent.go). Only the consent path
// (the button, or an authenticated dashboard the owner enabled) can make a
// consent.Consent, and it names the claim hash that was shown: a consent
// for any other claim is ErrStaleConsent.
func (e *Engine) Approve(node string, c consent.Consent) error {
	by := c.Via()
	return e.batch(func(t *txn) error {
		q, n, err := t.consentTarget(node, c)
		if err != nil {
			return err
		}
		if n.Role == RoleEgress {
			return t.egressDecided(q, n, true, by)
		}
		c := n.Claim
		n.addAttempt(Attempt{At: t.now, Outcome: OutcomeGranted, ClaimHash: c.Hash, Feedback: consentBy + by})
		if err := t.emit(Event{Kind: KindConsent, Quest: q.ID, Node: n.ID, Role: n.Role, Outcome: OutcomeGranted, ClaimHash: c.Hash, Reason: consentBy + by}); err != nil {
			return err
		}
		return t.pass(q, n, c.Answ, c.Owner, "CONSENT")
	}, nil)
}

// Reject refuses the claim: a FAIL try with the fact "rejected by human".
func (e *Engine) Reject(node string, c consent.Consent) error {
	by, claimHash := c.Via(), c.ClaimHash()
	return e.batch(func(t *txn) error {
		q, n, err := t.consentTarget(node, c)
		if err != nil {
			return err
		}
		if n.Role == RoleEgress {
			return t.egressDecided(q, n, false, by)
		}
		f := gates.Fact{Rule: "human", Level: gates.Fail, Where: "consent", Expected: "approval", Actual: "rejected by human (" + by + ")"}
		n.Claim = nil
		n.Outcome, n.Facts, n.Feedback = "FAIL", []gates.Fact{f}, "rejected by human"
		n.addAttempt(Attempt{At: t.now, Outcome: "rejected", Facts: n.Facts, Feedback: n.Feedback, ClaimHash: claimHash, TryUsed: true})
		if err := t.emit(Event{Kind: KindConsent, Quest: q.ID, Node: n.ID, Role: n.Role, Outcome: "rejected", ClaimHash: claimHash, Reason: "rejected by " + by}); err != nil {
			return err
		}
		if n.Stage == StageAccept {
			return t.humanRejectsAccept(q, n, by)
		}
		return t.failTry(q, n, "REJECTED")
	}, nil)
}

// consentExpired is the one rule of consent expiry: a request made at since
// has expired at now when expiry is positive and at least that long has
// passed.
func consentExpired(since, now time.Time, expiry time.Duration) bool {
	return expiry > 0 && !now.Before(since.Add(expiry))
}

// ConsentDeadline returns when r expires; false when requests never expire
// (ConsentExpiry is 0).
func (e *Engine) ConsentDeadline(r ConsentRequest) (time.Time, bool) {
	if e.conf().ConsentExpiry <= 0 {
		return time.Time{}, false
	}
	return r.Since.Add(e.conf().ConsentExpiry), true
}

// ConsentExpired reports whether r is past its deadline at now: the button
// no longer offers it, and the engine sends its node back to pending at the
// next tick or ExpireConsents.
func (e *Engine) ConsentExpired(r ConsentRequest, now time.Time) bool {
	return consentExpired(r.Since, now, e.conf().ConsentExpiry)
}

// ExpireConsents expires every consent request older than the configured
// ConsentExpiry now, rather than at the next tick (the daemon calls it when
// a request's deadline passes). It returns how many expired.
func (e *Engine) ExpireConsents() (int, error) {
	n := 0
	err := e.update(func(t *txn) error {
		var err error
		n, err = t.expireConsents(e.conf().ConsentExpiry)
		return err
	})
	return n, err
}

// expireConsents moves requests older than expiry back to pending (no try
// consumed) with a consent "expired" event. The consent bucket holds only
// the nodes awaiting a human, so this is cheap on every tick.
func (t *txn) expireConsents(expiry time.Duration) (int, error) {
	if expiry <= 0 {
		return 0, nil
	}
	var ids []string
	if err := t.tx.Consent().ForEach(func(k, _ []byte) error { ids = append(ids, string(k)); return nil }); err != nil {
		return 0, err
	}
	expired := 0
	for _, id := range ids {
		n, err := t.node(id)
		if err != nil {
			return expired, err
		}
		if n.Claim == nil || !consentExpired(n.Claim.Since, t.now, expiry) {
			continue
		}
		q, err := t.quest(n.Quest)
		if err != nil {
			return expired, err
		}
		if n.Role == RoleEgress {
			if err := t.egressAsked(q, n, expiry.String()); err != nil {
				return expired, err
			}
			expired++
			continue
		}
		hash := n.Claim.Hash
		why := fmt.Sprintf("no human answered within %s", expiry)
		n.Claim = nil
		n.addAttempt(Attempt{At: t.now, Outcome: "expired", ClaimHash: hash, Feedback: why})
		if err := t.emit(Event{Kind: KindConsent, Quest: q.ID, Node: n.ID, Role: n.Role, Outcome: "expired", ClaimHash: hash, Reason: why}); err != nil {
			return expired, err
		}
		if err := t.move(q, n, Pending, "consent expired: "+why); err != nil {
			return expired, err
		}
		if err := t.ledger(n, "EXPIRED", nil); err != nil {
			return expired, err
		}
		expired++
	}
	return expired, nil
}
