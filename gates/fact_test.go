package gates

import (
	"errors"
	"testing"

	"pgregory.net/rapid"
)

func TestFactString(t *testing.T) {
	tests := []struct {
		name string
		f    Fact
		want string
	}{
		{
			"contract",
			Fact{Rule: "contract", Level: Fail, Where: "verdict", Expected: "one of promising|dead|conclusion", Actual: `"maybe"`},
			`FAIL contract @ verdict: expected one of promising|dead|conclusion, got "maybe"`,
		},
		{
			"review",
			Fact{Rule: "citations-present", Level: Review, Where: "citations", Expected: "at least one", Actual: "none"},
			"REVIEW citations-present @ citations: expected at least one, got none",
		},
		{
			"no where",
			Fact{Rule: "x", Level: Fail, Expected: "a", Actual: "b"},
			"FAIL x: expected a, got b",
		},
		{
			"control characters stay on one line",
			Fact{Rule: "x", Level: Fail, Where: "w\n", Expected: "a\r\nb", Actual: "c\td\x00"},
			`FAIL x @ w\n: expected a\r\nb, got c\td\x00`,
		},
		{
			"invalid level shows as FAIL",
			Fact{Rule: "x", Level: 0, Where: "w", Expected: "a", Actual: "b"},
			"FAIL x @ w: expected a, got b",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.f.String(); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAggregate(t *testing.T) {
	fail := Fact{Rule: "a", Level: Fail}
	review := Fact{Rule: "b", Level: Review}
	tests := []struct {
		name  string
		facts []Fact
		want  Outcome
	}{
		{"nil", nil, OutcomePass},
		{"empty", []Fact{}, OutcomePass},
		{"one review", []Fact{review}, OutcomeReview},
		{"one fail", []Fact{fail}, OutcomeFail},
		{"review then fail", []Fact{review, fail}, OutcomeFail},
		{"fail then review", []Fact{fail, review}, OutcomeFail},
		{"many reviews", []Fact{review, review, review}, OutcomeReview},
		{"zero level counts as fail", []Fact{{Rule: "z"}}, OutcomeFail},
		{"unknown level counts as fail", []Fact{review, {Rule: "z", Level: 42}}, OutcomeFail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Aggregate(tt.facts)
			if v.Outcome != tt.want {
				t.Errorf("got %v, want %v", v.Outcome, tt.want)
			}
			if v.Facts == nil {
				t.Errorf("got nil Facts, want a non-nil slice")
			}
			if len(v.Facts) != len(tt.facts) {
				t.Errorf("got %d facts, want %d", len(v.Facts), len(tt.facts))
			}
			if err := v.Check(); err != nil {
				t.Errorf("Check: got %v, want nil", err)
			}
		})
	}
}

func TestAggregateCopiesFacts(t *testing.T) {
	in := []Fact{{Rule: "a", Level: Review}}
	v := Aggregate(in)
	in[0].Level = Fail
	if v.Facts[0].Level != Review {
		t.Errorf("got %v, want %v: verdict aliases the caller's slice", v.Facts[0].Level, Review)
	}
}

// TestAggregateProperty: PASS if and only if there are no facts; FAIL if and
// only if some fact is not a Review; never PASS with any fact present.
func TestAggregateProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		facts := rapid.SliceOf(rapid.Custom(func(t *rapid.T) Fact {
			return Fact{
				Rule:  rapid.StringMatching(`[a-z-]{0,8}`).Draw(t, "rule"),
				Level: Level(rapid.Uint8Range(0, 4).Draw(t, "level")),
			}
		})).Draw(t, "facts")
		v := Aggregate(facts)
		anyNonReview := false
		for _, f := range facts {
			if f.Level != Review {
				anyNonReview = true
			}
		}
		switch {
		case len(facts) > 0 && v.Outcome == OutcomePass:
			t.Fatalf("got PASS, want not PASS with %d facts", len(facts))
		case len(facts) == 0 && v.Outcome != OutcomePass:
			t.Fatalf("got %v, want PASS with no facts", v.Outcome)
		case anyNonReview != (v.Outcome == OutcomeFail):
			t.Fatalf("got %v, want FAIL=%v", v.Outcome, anyNonReview)
		}
		if err := v.Check(); err != nil {
			t.Fatalf("Check: got %v, want nil", err)
		}
	})
}

func TestVerdictCheck(t *testing.T) {
	tests := []struct {
		name string
		v    Verdict
		want error
	}{
		{"forged pass with a fail fact", Verdict{Outcome: OutcomePass, Facts: []Fact{{Level: Fail}}}, ErrInconsistentVerdict},
		{"forged pass with a review fact", Verdict{Outcome: OutcomePass, Facts: []Fact{{Level: Review}}}, ErrInconsistentVerdict},
		{"downgraded fail", Verdict{Outcome: OutcomeReview, Facts: []Fact{{Level: Fail}}}, ErrInconsistentVerdict},
		{"zero verdict", Verdict{}, ErrInvalidOutcome},
		{"honest pass", Verdict{Outcome: OutcomePass}, nil},
		{"honest review", Verdict{Outcome: OutcomeReview, Facts: []Fact{{Level: Review}}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.v.Check()
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
			if got, want := tt.v.Passed(), tt.want == nil && tt.v.Outcome == OutcomePass; got != want {
				t.Errorf("Passed: got %v, want %v", got, want)
			}
		})
	}
}
