package judge

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/questbox/questbox/gates"
)

func TestCombine(t *testing.T) {
	pass := gates.Aggregate(nil)
	review := gates.Aggregate([]gates.Fact{{Rule: "r", Level: gates.Review}})
	fail := gates.Aggregate([]gates.Fact{{Rule: "r", Level: gates.Fail}})
	forgedPass := gates.Verdict{Outcome: gates.OutcomePass, Facts: []gates.Fact{{Rule: "r", Level: gates.Fail}}}
	clear := Result{Effect: Clear, Quote: "q", Decided: true}
	doubt := Result{Effect: Doubt, Reason: "contradicts", Decided: true}
	tests := []struct {
		name    string
		l1      gates.Verdict
		results []Result
		want    gates.Outcome
	}{
		{"pass and no judges", pass, nil, gates.OutcomePass},
		{"pass and all clear", pass, []Result{clear, clear}, gates.OutcomePass},
		{"pass and one doubt", pass, []Result{clear, doubt}, gates.OutcomeReview},
		{"pass and zero effect", pass, []Result{{}}, gates.OutcomeReview},
		{"pass and unknown effect", pass, []Result{{Effect: 9}}, gates.OutcomeReview},
		{"review and clear stays review", review, []Result{clear}, gates.OutcomeReview},
		{"fail and clear stays fail", fail, []Result{clear}, gates.OutcomeFail},
		{"fail and doubt stays fail", fail, []Result{doubt}, gates.OutcomeFail},
		{"forged pass is a fail", forgedPass, []Result{clear}, gates.OutcomeFail},
		{"zero verdict is a fail", gates.Verdict{}, []Result{clear}, gates.OutcomeFail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Combine(tt.l1, tt.results...)
			if got.Outcome != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			if err := got.Check(); err != nil {
				t.Errorf("got an inconsistent verdict: %v", err)
			}
		})
	}
}

// TestJudgeCannotRaise: whatever the judges say, Combine never gives a better
// outcome than L1, and gives PASS only when L1 did and every judge cleared.
func TestJudgeCannotRaise(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var facts []gates.Fact
		for _, l := range rapid.SliceOfN(rapid.SampledFrom([]gates.Level{gates.Fail, gates.Review, 0, 7}), 0, 4).Draw(t, "levels") {
			facts = append(facts, gates.Fact{Rule: "r", Level: l})
		}
		l1 := gates.Aggregate(facts)
		var rs []Result
		allClear := true
		for _, e := range rapid.SliceOfN(rapid.Uint8(), 0, 5).Draw(t, "effects") {
			rs = append(rs, Result{Effect: Effect(e)})
			allClear = allClear && Effect(e) == Clear
		}
		got := Combine(l1, rs...)
		if got.Outcome < l1.Outcome {
			t.Fatalf("got %v from L1 %v: a judge raised the verdict", got.Outcome, l1.Outcome)
		}
		if (got.Outcome == gates.OutcomePass) != (l1.Outcome == gates.OutcomePass && allClear) {
			t.Fatalf("got %v from L1 %v and effects %v", got.Outcome, l1.Outcome, rs)
		}
	})
}
