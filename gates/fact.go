package gates

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Fact is what a rule that fired carries: which rule, how severe, where in the
// submission, what was expected and what was actually found. Facts are shown to
// humans and fed back into the agent's next prompt verbatim, so they must be
// precise and self-contained. Actual holds an escaped, length-limited excerpt of
// the offending value, never the whole submission.
type Fact struct {
	Rule     string `json:"rule"`
	Level    Level  `json:"level"`
	Where    string `json:"where"`
	Expected string `json:"expected"`
	Actual   string `json:"actual"`
}

// String renders the fact as one readable line, for example:
//
//	FAIL contract @ verdict: expected one of promising|dead|conclusion, got "maybe"
//
// Control characters in any field are escaped so the result is always a single
// line. An invalid level is shown as FAIL, matching how [Aggregate] counts it.
func (f Fact) String() string {
	lvl := "FAIL"
	if f.Level == Review {
		lvl = "REVIEW"
	}
	var b strings.Builder
	b.WriteString(lvl)
	b.WriteByte(' ')
	b.WriteString(oneLine(f.Rule))
	if f.Where != "" {
		b.WriteString(" @ ")
		b.WriteString(oneLine(f.Where))
	}
	b.WriteString(": expected ")
	b.WriteString(oneLine(f.Expected))
	b.WriteString(", got ")
	b.WriteString(oneLine(f.Actual))
	return b.String()
}

// oneLine escapes control characters so s cannot break a line-oriented log.
func oneLine(s string) string {
	if strings.IndexFunc(s, unicode.IsControl) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) {
			q := strconv.QuoteRune(r) // e.g. '\n'
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Verdict is what L1 aggregation produced. Only [Aggregate] and
// [Catalog.Evaluate] construct one on purpose; a Verdict assembled by hand or
// read back from storage must pass [Verdict.Check] before it is trusted.
// Facts is never nil in a verdict built by this package (it encodes as []).
type Verdict struct {
	Outcome Outcome `json:"outcome"`
	Facts   []Fact  `json:"facts"`
}

// Aggregate applies the L1 rule (docs/design.md, "Gates and levels"): any
// Fail fact gives FAIL; else any Review fact gives REVIEW; else PASS. A fact
// with an unknown level counts as Fail (fail closed). The facts are copied;
// the caller may reuse its slice.
func Aggregate(facts []Fact) Verdict {
	cp := make([]Fact, len(facts))
	copy(cp, facts)
	return aggregate(cp)
}

// aggregate is Aggregate on a slice the verdict may keep (nil becomes
// empty, as Aggregate's copy is).
func aggregate(facts []Fact) Verdict {
	if facts == nil {
		facts = []Fact{}
	}
	out := OutcomePass
	for _, f := range facts {
		if f.Level == Review {
			if out == OutcomePass {
				out = OutcomeReview
			}
			continue
		}
		out = OutcomeFail // Fail, or an invalid level
	}
	return Verdict{Outcome: out, Facts: facts}
}

// Check reports whether v is internally consistent: its outcome is valid and is
// exactly what [Aggregate] gives for its facts. It returns an error wrapping
// [ErrInconsistentVerdict] or [ErrInvalidOutcome] otherwise.
func (v Verdict) Check() error {
	if !v.Outcome.Valid() {
		return fmt.Errorf("gates: verdict outcome %s: %w", v.Outcome, ErrInvalidOutcome)
	}
	if want := Aggregate(v.Facts).Outcome; v.Outcome != want {
		return fmt.Errorf("gates: verdict says %s but its %d facts give %s: %w",
			v.Outcome, len(v.Facts), want, ErrInconsistentVerdict)
	}
	return nil
}

// Passed reports whether v is a consistent PASS.
func (v Verdict) Passed() bool { return v.Outcome == OutcomePass && v.Check() == nil }

// String renders the outcome followed by one fact per line.
func (v Verdict) String() string {
	var b strings.Builder
	b.WriteString(v.Outcome.String())
	for _, f := range v.Facts {
		b.WriteString("\n  ")
		b.WriteString(f.String())
	}
	return b.String()
}
