package engine

import (
	"slices"
	"time"

	"github.com/questbox/questbox/engine/humangate"
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/gates/consent"
)

// The consent queue (docs/design.md, "Authority"): its rules are package
// engine/humangate's; here are the engine's calls of them, each in its
// transaction, and what those rules ask of the transaction.

var _ humangate.Txn = (*txn)(nil)

// Consents returns the nodes awaiting consent, oldest request first, each
// with its deadline (Expired is ConsentQueue's to say).
func (e *Engine) Consents() ([]ConsentRequest, error) {
	var out []ConsentRequest
	err := e.store.view(func(tx *store.Tx) error {
		node := func(id string) (*Node, error) { return records.ReadNode(tx, id) }
		return tx.Consent().ForEach(func(k, _ []byte) error {
			n, err := records.ReadNode(tx, string(k))
			if err != nil {
				return err
			}
			r, err := humangate.Request(n, node)
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

// Approve applies human consent (L3) to the node's claim: the node
// continues to its verdict exactly as a PASS would (humangate.Approve). A
// consent for any claim but the node's current one is ErrStaleConsent.
func (e *Engine) Approve(node string, c consent.Consent) error {
	return e.batch(func(t *txn) error { return humangate.Approve(t, node, c) }, nil)
}

// Reject refuses the claim: a FAIL try with the fact "rejected by human"
// (humangate.Reject).
func (e *Engine) Reject(node string, c consent.Consent) error {
	return e.batch(func(t *txn) error { return humangate.Reject(t, node, c) }, nil)
}

// ConsentDeadline returns when r expires; false when requests never expire
// (ConsentExpiry is 0).
func (e *Engine) ConsentDeadline(r ConsentRequest) (time.Time, bool) {
	return humangate.Deadline(r, e.conf().ConsentExpiry)
}

// ConsentExpired reports whether r is past its deadline at now: the button
// no longer offers it, and the engine sends its node back to pending at the
// next tick or ExpireConsents.
func (e *Engine) ConsentExpired(r ConsentRequest, now time.Time) bool {
	return humangate.Expired(r.Since, now, e.conf().ConsentExpiry)
}

// ExpireConsents expires every consent request older than the configured
// ConsentExpiry now, rather than at the next tick (the daemon calls it when
// a request's deadline passes). It returns how many expired.
func (e *Engine) ExpireConsents() (int, error) {
	n := 0
	err := e.update(func(t *txn) error {
		var err error
		n, err = humangate.Expire(t, e.conf().ConsentExpiry)
		return err
	})
	return n, err
}

// AwaitingConsent lists the nodes in the consent index, the ones that
// wait for a human.
func (t *txn) AwaitingConsent() ([]string, error) {
	var ids []string
	err := t.tx.Consent().ForEach(func(k, _ []byte) error { ids = append(ids, string(k)); return nil })
	return ids, err
}
