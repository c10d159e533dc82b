package verdict

import (
	"fmt"
	"slices"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/gates"
)

// ApplyUnjudged applies the results that carry no verdict: an interrupted
// run, a deferral and a stopped quest. It reports done=false for a judged
// result, and for a deferral repeated MaxDeferrals times, which it turns
// into a FAIL in res for ApplyVerdict.
func ApplyUnjudged(t Txn, q *domain.Quest, n *domain.Node, runID string, res *Judged) (done bool, err error) {
	switch res.Kind {
	case Interrupted:
		n.AddAttempt(domain.Attempt{At: t.Now(), Run: runID, Outcome: "interrupted", Feedback: res.Why})
		return true, t.Move(q, n, domain.Pending, "interrupted: "+res.Why)
	case Deferred:
		n.Deferrals++
		if n.Deferrals < MaxDeferrals {
			n.AddAttempt(domain.Attempt{At: t.Now(), Run: runID, Outcome: "deferred", Feedback: res.Why})
			n.Claim = &domain.Claim{Hash: res.Claim, Raw: string(res.Raw), Since: t.Now(), Why: res.Why, Replay: len(res.Raw) > 0}
			if n.Claim.Replay && !slices.Contains(q.Replays, n.ID) {
				q.Replays = append(q.Replays, n.ID)
			}
			return true, t.Move(q, n, domain.Deferred, res.Why)
		}
		// The network is up but this stage keeps failing (a site that
		// refuses every connection): stop deferring, count it as a FAIL.
		n.Deferrals = 0
		res.Kind = Failed
		res.Facts = []gates.Fact{{Rule: "ground", Level: gates.Fail, Where: "network stage",
			Expected: "the network stage to run", Actual: fmt.Sprintf("deferred %d times in a row; last: %s", MaxDeferrals, res.Why)}}
		res.Feedback = domain.Feedback(res.Facts)
	case StopQuest:
		n.AddAttempt(domain.Attempt{At: t.Now(), Run: runID, Outcome: "error", Feedback: res.Why})
		if err := t.Move(q, n, domain.Pending, "no try consumed: "+res.Why); err != nil {
			return true, err
		}
		if q.Status == domain.QuestActive {
			return true, t.SetQuestStatus(q, domain.QuestStopped, fmt.Sprintf("needs attention: %s; fix it, then `questbox quest resume %s`", res.Why, q.ID))
		}
		return true, nil
	}
	return false, nil
}

// Record writes the verdict onto the node, counts a stall (but for a
// result that is no stall, Judged.NoStall) and emits the verdict event.
func Record(t Txn, q *domain.Quest, n *domain.Node, res *Judged) error {
	n.ClaimHash = res.Claim
	n.Outcome = res.Outcome()
	n.Facts = res.Facts
	n.Feedback = res.Feedback
	if !res.NoStall {
		if err := stall(t, q, n, res); err != nil {
			return err
		}
	}
	return t.Emit(domain.Event{Kind: domain.KindVerdict, Quest: q.ID, Node: n.ID, Role: n.Role, Outcome: res.Outcome(),
		Facts: res.Facts, Feedback: res.Feedback, RootCause: res.RootCause(), ClaimHash: res.Claim, Reason: res.Why})
}

// ApplyVerdict moves the node by its verdict: a FAIL uses a try, a REVIEW
// asks for consent, a PASS passes the node (or the member). A Team stage's
// PASS is the Team's (the engine's Txn.StagePassed), not this.
func ApplyVerdict(t Txn, q *domain.Quest, n *domain.Node, runID string, res *Judged) error {
	switch res.Kind {
	case Failed:
		n.AddAttempt(domain.Attempt{At: t.Now(), Run: runID, Outcome: "FAIL", Facts: res.Facts, Feedback: res.Feedback, ClaimHash: res.Claim, TryUsed: true})
		return FailTry(t, q, n, "FAIL")
	case Reviewed:
		n.AddAttempt(domain.Attempt{At: t.Now(), Run: runID, Outcome: "REVIEW", Facts: res.Facts, Feedback: res.Feedback, ClaimHash: res.Claim})
		n.Claim = &domain.Claim{Hash: res.Claim, Raw: string(res.Raw), Since: t.Now(), Facts: res.Facts, Why: res.Why, Reasons: res.Reasons,
			Answ: res.Answer, Owner: res.Owner}
		if err := t.Move(q, n, domain.AwaitingConsent, res.Why); err != nil {
			return err
		}
		if err := t.Ledger(n, "REVIEW", res.Facts); err != nil {
			return err
		}
		return t.Emit(domain.Event{Kind: domain.KindConsent, Quest: q.ID, Node: n.ID, Role: n.Role, Outcome: domain.ConsentRequested, ClaimHash: res.Claim, Reason: res.Why})
	case Passed:
		n.AddAttempt(domain.Attempt{At: t.Now(), Run: runID, Outcome: "PASS", Facts: res.Facts, ClaimHash: res.Claim})
		if res.Member != nil {
			return t.MemberPass(q, n, res.Member)
		}
		return Pass(t, q, n, res.Answer, res.Owner, "PASS")
	}
	panic(fmt.Sprintf("BUG: unknown result kind %d", res.Kind))
}

// FailTry consumes a try: back to pending, or exhausted at max_tries.
func FailTry(t Txn, q *domain.Quest, n *domain.Node, outcome string) error {
	n.Tries++
	maxTries := t.MaxTries(q, n.Role)
	to, why := domain.Pending, fmt.Sprintf("%s, try %d of %d; feedback kept for the next prompt", outcome, n.Tries, maxTries)
	if n.Tries >= maxTries {
		to, why = domain.Exhausted, fmt.Sprintf("%s %d times (max_tries %d)", outcome, n.Tries, maxTries)
	}
	if err := t.Move(q, n, to, why); err != nil {
		return err
	}
	if err := t.Ledger(n, outcome, n.Facts); err != nil {
		return err
	}
	if to == domain.Pending {
		t.FollowUp(q, n.ID) // the retry: follow-up work (engine/chain.go)
	}
	if to == domain.Exhausted && n.Team != "" {
		return t.StageExhausted(q, n)
	}
	return nil
}
