package humangate

// Egress consent (docs/design.md, "Privacy egress": explicit egress, consent,
// redaction). With the engine's Options.EgressConsent, a new quest whose
// egress names a vendor that is not local gets one more node, of role
// egress, born awaiting consent: its claim says which vendors the quest
// would send its material to. It is a consent request like any other
// (consent.go): every consent list shows it, the button's long press or
// the dashboard (where enabled) decides it, and when consent requests
// expire it is asked again rather than dropped.
//
// Until it is given, the quest is held (Quest.EgressConsent names the
// node): the tick gives it no turn, so no provider runs and no judge is
// asked, its kept answers are not judged again, `next` offers it nothing
// and `submit` refuses its answers. Given, the node locks (explored) and
// the quest runs as any other. Rejected, the node is exhausted and the
// quest terminated, naming the refusal: nothing was sent.
//
// Cost: one string compared per active quest per tick.

import (
	"fmt"
	"strings"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/gates"
)

// egressVendors are the vendors of q's egress that are not local.
func egressVendors(q *domain.Quest) []string {
	var out []string
	for _, v := range q.Egress {
		if v != domain.VendorLocal {
			out = append(out, v)
		}
	}
	return out
}

// egressWhy is why q's egress consent waits, as every consent list shows
// it: "quest q3 would send its material to vendor anthropic (egress)".
func egressWhy(q *domain.Quest) string {
	vs := egressVendors(q)
	noun := "vendor"
	if len(vs) > 1 {
		noun = "vendors"
	}
	return fmt.Sprintf("quest %s would send its material to %s %s (egress)", q.ID, noun, strings.Join(vs, ", "))
}

// AskEgress asks a human's consent for new quest q when its egress names a
// vendor that is not local, and holds q until it is given.
func AskEgress(t Txn, q *domain.Quest) error {
	if len(egressVendors(q)) == 0 {
		return nil
	}
	why := egressWhy(q)
	// The claim is what the human approves: every face shows it, and
	// the consent names its hash.
	raw := fmt.Sprintf("Quest %s %q may send its material (its direction, its nodes' prompts and answers, the sources they cite) to %s, as its egress (%s) allows.",
		q.ID, q.Name, strings.Join(egressVendors(q), ", "), strings.Join(q.Egress, ","))
	hash := gates.ClaimHash([]byte(raw))
	hyp := fmt.Sprintf("Egress consent: may quest %s send its material to %s?", q.ID, strings.Join(egressVendors(q), ", "))
	n, dup, err := t.NewNodeWith(q, nil, domain.RoleEgress, hyp, domain.AwaitingConsent, "", func(n *domain.Node) {
		n.Outcome, n.ClaimHash = "REVIEW", hash
		n.Claim = &domain.Claim{Hash: hash, Raw: raw, Since: t.Now(), Why: why, Reasons: []domain.ConsentReason{{Kind: domain.ReasonEgress, Text: why}}}
		n.AddAttempt(domain.Attempt{At: t.Now(), Outcome: "REVIEW", ClaimHash: hash, Feedback: why})
	})
	if err != nil {
		return err
	}
	if dup {
		return fmt.Errorf("BUG: egress consent %q exists already as %s", hyp, n.ID)
	}
	q.EgressConsent = n.ID
	t.Track(q)
	if err := t.Ledger(n, "REVIEW", nil); err != nil {
		return err
	}
	return t.Emit(domain.Event{Kind: domain.KindConsent, Quest: q.ID, Node: n.ID, Role: n.Role, Outcome: domain.ConsentRequested, ClaimHash: hash, Reason: why})
}

// egressDecided applies a human's answer (by: "button", "dashboard:owner")
// to q's egress consent n: given, n locks and q runs; refused, n is
// exhausted and q terminated, naming the refusal.
func egressDecided(t Txn, q *domain.Quest, n *domain.Node, granted bool, by string) error {
	hash, why := n.Claim.Hash, n.Claim.Why
	n.Claim = nil
	if q.EgressConsent == n.ID {
		q.EgressConsent = ""
		t.Track(q)
	}
	if granted {
		n.AddAttempt(domain.Attempt{At: t.Now(), Outcome: "granted", ClaimHash: hash, Feedback: "consent by " + by})
		if err := t.Emit(domain.Event{Kind: domain.KindConsent, Quest: q.ID, Node: n.ID, Role: n.Role, Outcome: "granted", ClaimHash: hash, Reason: "consent by " + by}); err != nil {
			return err
		}
		if err := t.Move(q, n, domain.Passed, "egress consent by "+by); err != nil {
			return err
		}
		if err := t.Move(q, n, domain.Explored, "egress consent by "+by+": the quest may send its material to "+strings.Join(egressVendors(q), ", ")); err != nil {
			return err
		}
		return t.Ledger(n, "CONSENT", nil)
	}
	f := gates.Fact{Rule: "human", Level: gates.Fail, Where: "egress consent", Expected: "approval", Actual: "rejected by human (" + by + ")"}
	n.Outcome, n.Facts, n.Feedback = "FAIL", []gates.Fact{f}, "rejected by human"
	n.AddAttempt(domain.Attempt{At: t.Now(), Outcome: "rejected", Facts: n.Facts, Feedback: n.Feedback, ClaimHash: hash})
	if err := t.Emit(domain.Event{Kind: domain.KindConsent, Quest: q.ID, Node: n.ID, Role: n.Role, Outcome: "rejected", ClaimHash: hash, Reason: "rejected by " + by}); err != nil {
		return err
	}
	if err := t.Move(q, n, domain.Exhausted, "egress refused by "+by); err != nil {
		return err
	}
	if err := t.Ledger(n, "REJECTED", n.Facts); err != nil {
		return err
	}
	if q.Status == domain.QuestDone || q.Status == domain.QuestTerminated {
		return nil
	}
	return t.SetQuestStatus(q, domain.QuestTerminated, fmt.Sprintf("egress refused by a human (%s): %s; nothing was sent", by, why))
}

// egressAsked renews q's egress consent n when consent requests expire:
// unlike a claim, which its agent makes again, it is the quest's only
// way to run, so it is asked again at once (an "expired" consent event,
// then a "requested" one) rather than dropped.
func egressAsked(t Txn, q *domain.Quest, n *domain.Node, expiry string) error {
	hash := n.Claim.Hash
	n.Claim.Since = t.Now()
	n.AddAttempt(domain.Attempt{At: t.Now(), Outcome: "expired", ClaimHash: hash, Feedback: "no human answered within " + expiry + "; asked again"})
	if err := t.SaveNode(n); err != nil {
		return err
	}
	if err := t.Emit(domain.Event{Kind: domain.KindConsent, Quest: q.ID, Node: n.ID, Role: n.Role, Outcome: "expired", ClaimHash: hash, Reason: "no human answered within " + expiry}); err != nil {
		return err
	}
	return t.Emit(domain.Event{Kind: domain.KindConsent, Quest: q.ID, Node: n.ID, Role: n.Role, Outcome: domain.ConsentRequested, ClaimHash: hash, Reason: n.Claim.Why})
}

// EgressHeld says why nothing of q may run or be answered now, or "": its
// egress consent waits for a human.
func EgressHeld(q *domain.Quest) string {
	if q.EgressConsent == "" {
		return ""
	}
	return fmt.Sprintf("quest %s waits for its egress consent (node %s): nothing of it leaves the box until a human gives it on the button (long press) or the dashboard", q.ID, q.EgressConsent)
}
