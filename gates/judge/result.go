package judge

import (
	"fmt"

	"github.com/questbox/questbox/gates"
)

// RuleJudge is the rule id of the Review fact that a doubting judge adds to
// an L1 verdict.
const RuleJudge = "judge"

// Effect is everything an L2 judgement can do to an L1 verdict. There is no
// value meaning "pass": the strongest effect is [Doubt], which makes the
// verdict REVIEW. [Clear] only means "no doubt raised"; it carries no
// authority and cannot raise a verdict. The zero value and any other value
// are treated as Doubt (fail closed).
type Effect uint8

const (
	// Clear means the judge raised no doubt. It leaves the L1 verdict as it is.
	Clear Effect = 1
	// Doubt means the judge asks for a human (REVIEW).
	Doubt Effect = 2
)

// String returns "clear" or "doubt"; any other value is "doubt(N)".
func (e Effect) String() string {
	switch e {
	case Clear:
		return "clear"
	case Doubt:
		return "doubt"
	}
	return fmt.Sprintf("doubt(%d)", uint8(e))
}

// Result is one L2 judgement of one (claim, evidence) pair.
//
// Decided is false when the judge did not really decide: its output was
// malformed, its call failed, or it was cancelled. Undecided results are
// always Doubt and are never cached.
type Result struct {
	Effect  Effect `json:"effect"`
	Quote   string `json:"quote,omitempty"`  // the evidence the judge quoted for Clear
	Reason  string `json:"reason,omitempty"` // why, in the judge's or our words
	Judge   string `json:"judge,omitempty"`  // the fingerprint of the judge that answered
	Decided bool   `json:"decided"`
}

// Cleared reports whether r raised no doubt. An invalid effect is not clear.
func (r Result) Cleared() bool { return r.Effect == Clear }

// Fact is the Review fact that r adds to a verdict when it is not clear.
func (r Result) Fact() gates.Fact {
	reason := r.Reason
	if reason == "" {
		reason = "no reason given"
	}
	who := r.Judge
	if who == "" {
		who = "the judge"
	}
	return gates.Fact{Rule: RuleJudge, Level: gates.Review, Where: "claim",
		Expected: "an L2 judge to clear the claim with a quote from the evidence",
		Actual:   who + " raised doubt: " + reason}
}

// doubtf is an undecided Doubt with a reason.
func doubtf(judge, format string, args ...any) Result {
	return Result{Effect: Doubt, Judge: judge, Reason: fmt.Sprintf(format, args...)}
}

// Combine applies L2 results to an L1 verdict. It can only keep or lower the
// verdict, never raise it:
//
//   - the output is PASS if and only if l1 is a consistent PASS and every
//     result is [Clear];
//   - each result that is not Clear adds its Review [Result.Fact], so a PASS
//     becomes REVIEW and a FAIL stays FAIL;
//   - an l1 that fails [gates.Verdict.Check] (hand-made or corrupted) becomes
//     FAIL with a fact saying so.
//
// The output is always built by [gates.Aggregate] or is l1 itself (copied),
// so L2 has no way to construct a PASS of its own.
func Combine(l1 gates.Verdict, results ...Result) gates.Verdict {
	facts := append([]gates.Fact(nil), l1.Facts...)
	if err := l1.Check(); err != nil {
		facts = append(facts, gates.Fact{Rule: RuleJudge, Level: gates.Fail, Where: "verdict",
			Expected: "a consistent L1 verdict", Actual: err.Error()})
		return gates.Aggregate(facts)
	}
	for _, r := range results {
		if !r.Cleared() {
			facts = append(facts, r.Fact())
		}
	}
	return gates.Aggregate(facts)
}
