package gates

import (
	"errors"
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

func mustGraph(t interface{ Fatal(...any) }, rules []Rule, edges []Edge, w map[string]float64) *Catalog {
	c, err := NewGraphCatalog(rules, edges, w)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func att(from, to string) Edge { return Edge{From: from, Kind: Attacks, To: to} }
func sup(from, to string) Edge { return Edge{From: from, Kind: Supersedes, To: to} }

// TestGraphZeroEdgesEqualsAggregate: with no edges (whatever the weights),
// the graph's verdict is exactly level aggregation, facts and all.
func TestGraphZeroEdgesEqualsAggregate(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 12).Draw(t, "n")
		var rules []Rule
		weights := map[string]float64{}
		for i := range n {
			id := "r" + itoa(i)
			level := rapid.SampledFrom([]Level{Fail, Review}).Draw(t, "level")
			k := rapid.IntRange(0, 3).Draw(t, "facts")
			rules = append(rules, fakeRule{id: id, level: level, stage: StagePure, check: func(Input) []Fact {
				fs := make([]Fact, k)
				for j := range fs {
					fs[j] = Fact{Where: itoa(j), Expected: "e", Actual: "a"}
				}
				return fs
			}})
			if rapid.Bool().Draw(t, "weighted") {
				weights[id] = rapid.Float64Range(0.01, 1).Draw(t, "w")
			}
		}
		plain := mustCatalog(t, rules...).Evaluate(Input{})
		graph := mustGraph(t, rules, nil, weights).Report(Input{})
		if graph.Verdict.String() != plain.String() {
			t.Fatalf("got %v, want %v", graph.Verdict, plain)
		}
		var all []Fact
		for _, r := range rules {
			for _, f := range r.Check(Input{}) {
				f.Rule, f.Level = r.ID(), r.Level()
				all = append(all, f)
			}
		}
		if want := Aggregate(all); graph.Verdict.Outcome != want.Outcome {
			t.Fatalf("got %v, want %v", graph.Verdict.Outcome, want.Outcome)
		}
		if len(graph.Defeated) != 0 {
			t.Fatalf("got defeated %v, want none without edges", graph.Defeated)
		}
	})
}

func TestGraphVerdicts(t *testing.T) {
	a, b, c := firing("a", Fail, StagePure), firing("b", Fail, StagePure), firing("c", Fail, StagePure)
	ra := firing("a", Review, StagePure)
	tests := []struct {
		name         string
		rules        []Rule
		edges        []Edge
		weights      map[string]float64
		want         Outcome
		wantDefeated []string
		wantRoot     string
		wantFlip     string
	}{
		{"one attack defeats", []Rule{ra, b}, []Edge{att("a", "b")}, nil, OutcomeReview, []string{"b"}, "a",
			"to flip the verdict to PASS, clear: a, b"},
		{"silent attacker does nothing", []Rule{silent("a"), b}, []Edge{att("a", "b")}, nil, OutcomeFail, nil, "b",
			"to flip the verdict to PASS, clear: b"},
		{"reinstatement", []Rule{ra, b, firing("c", Review, StagePure)}, []Edge{att("c", "a"), att("a", "b")}, nil, OutcomeFail, []string{"a"}, "b",
			"to flip the verdict to REVIEW, clear: b"},
		{"light attacker does not defeat", []Rule{ra, b}, []Edge{att("a", "b")}, map[string]float64{"a": 0.9}, OutcomeFail, nil, "b",
			"to flip the verdict to REVIEW, clear: b"},
		{"two-cycle: both survive", []Rule{a, b}, []Edge{att("a", "b"), att("b", "a")}, nil, OutcomeFail, nil, "a",
			"to flip the verdict to PASS, clear: a, b"},
		{"three-cycle: all survive", []Rule{a, b, c}, []Edge{att("a", "b"), att("b", "c"), att("c", "a")}, nil, OutcomeFail, nil, "a",
			"to flip the verdict to PASS, clear: a, b, c"},
		{"clique: all defeated is review, never pass", []Rule{a, b, c},
			[]Edge{att("a", "b"), att("b", "a"), att("b", "c"), att("c", "b"), att("a", "c"), att("c", "a")}, nil,
			OutcomeReview, []string{"a", "b", "c"}, RuleGraph, "to flip the verdict to PASS, clear: a, b, c"},
		{"supersedes picks the root", []Rule{a, b}, []Edge{sup("b", "a")}, nil, OutcomeFail, nil, "b",
			"to flip the verdict to PASS, clear: b, a"},
		{"supersedes beats level", []Rule{ra, b}, []Edge{sup("a", "b")}, nil, OutcomeFail, nil, "a",
			"to flip the verdict to REVIEW, clear: b"},
		{"transitive supersedes", []Rule{a, silent("b"), c}, []Edge{sup("c", "b"), sup("b", "a")}, nil, OutcomeFail, nil, "c",
			"to flip the verdict to PASS, clear: c, a"},
		{"nothing fired", []Rule{silent("a"), silent("b")}, []Edge{att("a", "b")}, nil, OutcomePass, nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustGraph(t, tt.rules, tt.edges, tt.weights).Report(Input{})
			if got.Verdict.Outcome != tt.want {
				t.Errorf("got %v, want %v", got.Verdict, tt.want)
			}
			if err := got.Verdict.Check(); err != nil {
				t.Errorf("got an inconsistent verdict: %v", err)
			}
			var defeated []string
			for _, f := range got.Defeated {
				defeated = append(defeated, f.Rule)
			}
			if !slices.Equal(defeated, tt.wantDefeated) {
				t.Errorf("got defeated %v, want %v", defeated, tt.wantDefeated)
			}
			if got.Feedback.RootCause.Rule != tt.wantRoot {
				t.Errorf("got root cause %q, want %q", got.Feedback.RootCause.Rule, tt.wantRoot)
			}
			if got.Feedback.Flip != tt.wantFlip {
				t.Errorf("got flip %q, want %q", got.Feedback.Flip, tt.wantFlip)
			}
		})
	}
}

func TestGraphScoresConverge(t *testing.T) {
	tests := []struct {
		name  string
		n     int
		edges [][2]int
		want  []float64
	}{
		{"unattacked", 1, nil, []float64{1}},
		{"chain", 3, [][2]int{{0, 1}, {1, 2}}, []float64{1, 0.5, 2.0 / 3}},
		{"two-cycle", 2, [][2]int{{0, 1}, {1, 0}}, []float64{(math.Sqrt(5) - 1) / 2, (math.Sqrt(5) - 1) / 2}},
		{"clique of three", 3, [][2]int{{0, 1}, {1, 0}, {1, 2}, {2, 1}, {0, 2}, {2, 0}}, []float64{0.5, 0.5, 0.5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &defeat{attackers: make([][]int, tt.n), weight: make([]float64, tt.n)}
			fired := make([]bool, tt.n)
			for i := range fired {
				fired[i], g.weight[i] = true, 1
			}
			for _, e := range tt.edges {
				g.attackers[e[1]] = append(g.attackers[e[1]], e[0])
			}
			got := g.scores(fired)
			for i := range got {
				if math.Abs(got[i]-tt.want[i]) > 1e-9 {
					t.Errorf("got s(%d) = %v, want %v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestNewGraphCatalogErrors(t *testing.T) {
	a, b := silent("a"), silent("b")
	g := fakeRule{id: "g", level: Fail, stage: StageGround}
	tests := []struct {
		name    string
		edges   []Edge
		weights map[string]float64
	}{
		{"unknown from", []Edge{att("x", "a")}, nil},
		{"unknown to", []Edge{att("a", "x")}, nil},
		{"unknown kind", []Edge{{From: "a", Kind: 9, To: "b"}}, nil},
		{"self attack", []Edge{att("a", "a")}, nil},
		{"duplicate", []Edge{att("a", "b"), att("a", "b")}, nil},
		{"supersedes cycle", []Edge{sup("a", "b"), sup("b", "a")}, nil},
		{"ground attacks pure", []Edge{att("g", "a")}, nil},
		{"zero weight", nil, map[string]float64{"a": 0}},
		{"heavy weight", nil, map[string]float64{"a": 1.5}},
		{"NaN weight", nil, map[string]float64{"a": math.NaN()}},
		{"weight for unknown rule", nil, map[string]float64{"x": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewGraphCatalog([]Rule{a, b, g}, tt.edges, tt.weights)
			if !errors.Is(err, ErrInvalidGraph) {
				t.Errorf("got %v, want ErrInvalidGraph", err)
			}
		})
	}
	if _, err := NewGraphCatalog([]Rule{a, b, g}, []Edge{att("a", "g"), sup("g", "a")}, nil); err != nil {
		t.Errorf("got %v for pure attacks ground, want nil", err)
	}
}

func TestFeedbackString(t *testing.T) {
	tests := []struct {
		name string
		fb   Feedback
		want string
	}{
		{"zero", Feedback{}, ""},
		{"root only", Feedback{RootCause: Fact{Rule: "a", Level: Fail, Where: "w", Expected: "e", Actual: "x"}},
			"root cause: FAIL a @ w: expected e, got x"},
		{"full", Feedback{
			RootCause:    Fact{Rule: "a", Level: Fail, Where: "w", Expected: "e", Actual: "x"},
			SideBranches: []Fact{{Rule: "b", Level: Review, Where: "v", Expected: "f", Actual: "y\nz"}},
			Flip:         "to flip the verdict to REVIEW, clear: a",
		}, "root cause: FAIL a @ w: expected e, got x\nside branch: REVIEW b @ v: expected f, got y\\nz\nto flip the verdict to REVIEW, clear: a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.fb.String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
