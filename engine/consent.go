package engine

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/gates"
	"github.com/questbox/questbox/gates/consent"
)

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
	n, err := t.Node(node)
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
	q, err := t.Quest(n.Quest)
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
		n.AddAttempt(Attempt{At: t.now, Outcome: OutcomeGranted, ClaimHash: c.Hash, Feedback: domain.ConsentBy + by})
		if err := t.Emit(Event{Kind: KindConsent, Quest: q.ID, Node: n.ID, Role: n.Role, Outcome: OutcomeGranted, ClaimHash: c.Hash, Reason: domain.ConsentBy + by}); err != nil {
			return err
		}
		return t.Pass(q, n, c.Answ, c.Owner, "CONSENT")
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
		n.AddAttempt(Attempt{At: t.now, Outcome: "rejected", Facts: n.Facts, Feedback: n.Feedback, ClaimHash: claimHash, TryUsed: true})
		if err := t.Emit(Event{Kind: KindConsent, Quest: q.ID, Node: n.ID, Role: n.Role, Outcome: "rejected", ClaimHash: claimHash, Reason: "rejected by " + by}); err != nil {
			return err
		}
		if n.Stage == StageAccept {
			return t.HumanRejectsAccept(q, n, by)
		}
		return t.FailTry(q, n, "REJECTED")
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
		n, err := t.Node(id)
		if err != nil {
			return expired, err
		}
		if n.Claim == nil || !consentExpired(n.Claim.Since, t.now, expiry) {
			continue
		}
		q, err := t.Quest(n.Quest)
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
		n.AddAttempt(Attempt{At: t.now, Outcome: "expired", ClaimHash: hash, Feedback: why})
		if err := t.Emit(Event{Kind: KindConsent, Quest: q.ID, Node: n.ID, Role: n.Role, Outcome: "expired", ClaimHash: hash, Reason: why}); err != nil {
			return expired, err
		}
		if err := t.Move(q, n, Pending, "consent expired: "+why); err != nil {
			return expired, err
		}
		if err := t.Ledger(n, "EXPIRED", nil); err != nil {
			return expired, err
		}
		expired++
	}
	return expired, nil
}
