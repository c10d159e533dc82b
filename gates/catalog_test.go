package gates

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// fakeRule is a configurable Rule for catalog tests.
type fakeRule struct {
	id    string
	level Level
	stage Stage
	check func(Input) []Fact
}

func (r fakeRule) ID() string          { return r.id }
func (r fakeRule) Level() Level        { return r.level }
func (r fakeRule) Stage() Stage        { return r.stage }
func (r fakeRule) Description() string { return "fake " + r.id }
func (r fakeRule) Check(in Input) []Fact {
	if r.check == nil {
		return nil
	}
	return r.check(in)
}

func silent(id string) fakeRule { return fakeRule{id: id, level: Fail, stage: StagePure} }

func firing(id string, l Level, s Stage) fakeRule {
	return fakeRule{id: id, level: l, stage: s, check: func(Input) []Fact {
		return []Fact{{Where: "w", Expected: "e", Actual: "a"}}
	}}
}

// panicky panics in whichever metadata method is named.
type panicky struct {
	fakeRule
	in string
}

func (p panicky) ID() string {
	if p.in == "id" {
		panic("boom")
	}
	return p.fakeRule.ID()
}

func TestNewCatalogErrors(t *testing.T) {
	var nilPtr *fakeRule
	tests := []struct {
		name    string
		rules   []Rule
		want    error
		mention string
	}{
		{"empty", nil, ErrEmptyCatalog, "empty"},
		{"nil rule", []Rule{silent("a"), nil}, ErrInvalidRule, "#1"},
		{"typed nil rule", []Rule{nilPtr}, ErrInvalidRule, "#0"},
		{"empty id", []Rule{silent("")}, ErrInvalidRule, `""`},
		{"id with spaces", []Rule{silent(" a")}, ErrInvalidRule, `" a"`},
		{"duplicate", []Rule{silent("a"), silent("b"), silent("a")}, ErrDuplicateRule, `"a"`},
		{"zero level", []Rule{fakeRule{id: "lvl", stage: StagePure}}, ErrInvalidLevel, `"lvl"`},
		{"unknown level", []Rule{fakeRule{id: "lvl9", level: 9, stage: StagePure}}, ErrInvalidLevel, `"lvl9"`},
		{"zero stage", []Rule{fakeRule{id: "st", level: Fail}}, ErrInvalidStage, `"st"`},
		{"bad evidence bounds", []Rule{EvidenceLength(50, 10)}, ErrInvalidConfig, `"evidence-length"`},
		{"negative evidence min", []Rule{EvidenceLength(-1, 10)}, ErrInvalidConfig, `"evidence-length"`},
		{"panicking id", []Rule{panicky{silent("p"), "id"}}, ErrInvalidRule, "panicked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewCatalog(tt.rules...)
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			if c != nil {
				t.Errorf("got catalog %v, want nil", c)
			}
			if !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("got %q, want it to mention %s", err, tt.mention)
			}
		})
	}
}

func TestCatalogRulesIsACopy(t *testing.T) {
	c, err := NewCatalog(silent("a"), silent("b"))
	if err != nil {
		t.Fatal(err)
	}
	rs := c.Rules()
	rs[0] = silent("evil")
	if got := c.Rules()[0].ID(); got != "a" {
		t.Errorf("got %v, want %v", got, "a")
	}
	if got := len(c.Rules()); got != 2 {
		t.Errorf("got %v, want %v", got, 2)
	}
}

func TestEvaluate(t *testing.T) {
	tests := []struct {
		name  string
		rules []Rule
		want  Outcome
		facts int
	}{
		{"all silent", []Rule{silent("a"), silent("b")}, OutcomePass, 0},
		{"one review", []Rule{silent("a"), firing("r", Review, StagePure)}, OutcomeReview, 1},
		{"review and fail", []Rule{firing("r", Review, StagePure), firing("f", Fail, StagePure)}, OutcomeFail, 2},
		{"ground rules run too", []Rule{firing("g", Fail, StageGround)}, OutcomeFail, 1},
		{"panicking review rule fails", []Rule{fakeRule{id: "p", level: Review, stage: StagePure,
			check: func(Input) []Fact { panic("kaboom") }}}, OutcomeFail, 1},
		{"nil map write panic", []Rule{fakeRule{id: "p", level: Fail, stage: StagePure,
			check: func(Input) []Fact { var m map[string]int; m["x"]++; return nil }}}, OutcomeFail, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewCatalog(tt.rules...)
			if err != nil {
				t.Fatal(err)
			}
			v := c.Evaluate(Input{})
			if v.Outcome != tt.want {
				t.Errorf("got %v, want %v", v.Outcome, tt.want)
			}
			if len(v.Facts) != tt.facts {
				t.Errorf("got %d facts, want %d: %v", len(v.Facts), tt.facts, v)
			}
			if err := v.Check(); err != nil {
				t.Errorf("Check: got %v, want nil", err)
			}
		})
	}
}

func TestEvaluatePanicFact(t *testing.T) {
	c, err := NewCatalog(silent("ok"), fakeRule{id: "bad", level: Review, stage: StagePure,
		check: func(Input) []Fact { panic("index out of range") }})
	if err != nil {
		t.Fatal(err)
	}
	v := c.Evaluate(Input{Raw: []byte("x")})
	if len(v.Facts) != 1 {
		t.Fatalf("got %d facts, want 1", len(v.Facts))
	}
	f := v.Facts[0]
	if f.Rule != "bad" || f.Level != Fail {
		t.Errorf("got %s/%v, want bad/fail", f.Rule, f.Level)
	}
	if want := "rule bad panicked: index out of range"; f.Actual != want {
		t.Errorf("got %v, want %v", f.Actual, want)
	}
}

// TestEvaluateStampsFacts: a rule cannot speak for another rule or soften the
// level it declared.
func TestEvaluateStampsFacts(t *testing.T) {
	liar := fakeRule{id: "liar", level: Fail, stage: StagePure, check: func(Input) []Fact {
		return []Fact{{Rule: "someone-else", Level: Review, Where: "w"}}
	}}
	c, err := NewCatalog(liar)
	if err != nil {
		t.Fatal(err)
	}
	v := c.Evaluate(Input{})
	if v.Outcome != OutcomeFail {
		t.Errorf("got %v, want %v", v.Outcome, OutcomeFail)
	}
	if got := v.Facts[0]; got.Rule != "liar" || got.Level != Fail {
		t.Errorf("got %s/%v, want liar/fail", got.Rule, got.Level)
	}
}

func TestEvaluateStage(t *testing.T) {
	c, err := NewCatalog(firing("p", Review, StagePure), firing("g", Fail, StageGround))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		stage Stage
		want  Outcome
	}{
		{"pure", StagePure, OutcomeReview},
		{"ground", StageGround, OutcomeFail},
		{"invalid stage fails closed", Stage(0), OutcomeFail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.EvaluateStage(Input{}, tt.stage).Outcome; got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	// Staged and full evaluation agree (docs/design.md, "Staged evaluation
	// and ground").
	var all []Fact
	for _, s := range []Stage{StagePure, StageGround} {
		all = append(all, c.EvaluateStage(Input{}, s).Facts...)
	}
	if got, want := Aggregate(all).Outcome, c.Evaluate(Input{}).Outcome; got != want {
		t.Errorf("staged: got %v, want %v", got, want)
	}
}

func TestZeroCatalogFailsClosed(t *testing.T) {
	var nilCat *Catalog
	for name, c := range map[string]*Catalog{"nil": nilCat, "zero": {}} {
		if got := c.Evaluate(Input{}).Outcome; got != OutcomeFail {
			t.Errorf("%s: got %v, want %v", name, got, OutcomeFail)
		}
	}
}

func TestEvaluateConcurrently(t *testing.T) {
	c := DefaultCatalog()
	inputs := []Input{
		{Raw: []byte(validJSON)},
		{Raw: []byte(validOwnerJSON), Role: RoleOwner},
		{Raw: []byte("nope")},
	}
	want := make([]Outcome, len(inputs))
	for i, in := range inputs {
		want[i] = c.Evaluate(in).Outcome
	}
	done := make(chan struct{})
	for g := 0; g < 8; g++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := 0; i < 50; i++ {
				k := (g + i) % len(inputs)
				if got := c.Evaluate(inputs[k]).Outcome; got != want[k] {
					t.Errorf("got %v, want %v", got, want[k])
					return
				}
			}
		}()
	}
	for g := 0; g < 8; g++ {
		<-done
	}
}

// TestEvaluateConcurrentlyAnswerSets has goroutines share the answer-set
// catalogs, whose evaluations reuse each other's memo and fact buffer: every
// verdict and report must be the one a lone evaluation gives, fact for fact.
func TestEvaluateConcurrentlyAnswerSets(t *testing.T) {
	flat, graph := answerSetCatalog(t, false), answerSetCatalog(t, true)
	sets := []string{"fires7", "pass", "long-evidence", "malformed"}
	inputs := make([]Input, len(sets))
	wantV := make([]Verdict, len(sets))
	wantR := make([]Staged, len(sets))
	for i, set := range sets {
		inputs[i] = answerSetInput(t, set)
		wantV[i], wantR[i] = flat.Evaluate(inputs[i]), graph.Report(inputs[i])
	}
	done := make(chan struct{})
	for g := 0; g < 6; g++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := 0; i < 12; i++ {
				k := (g + i) % len(sets)
				if got := flat.Evaluate(inputs[k]); !reflect.DeepEqual(got, wantV[k]) {
					t.Errorf("%s: got %v, want %v", sets[k], got, wantV[k])
					return
				}
				if got := graph.Report(inputs[k]); !reflect.DeepEqual(got, wantR[k]) {
					t.Errorf("%s: got %v, want %v", sets[k], got, wantR[k])
					return
				}
			}
		}()
	}
	for g := 0; g < 6; g++ {
		<-done
	}
}
