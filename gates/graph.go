package gates

import (
	"fmt"
	"math"
	"strings"
)

// The defeat graph (docs/design.md, "The defeat graph") is an opt-in way of
// deciding a catalog's facts when rules compete. Its arguments are a warrant
// ("PASS unless attacked") and one counter per rule that fired in this
// evaluation; every counter attacks the warrant. Declared edges relate rules:
//
//   - A attacks B: when both fire, A weakens B. Acceptability is the weighted
//     h-Categoriser of Amgoud & Ben-Naim (2013), over the counters that fired:
//     s(a) = w(a) / (1 + Σ_{b fired, b attacks a} s(b)), iterated from
//     s = w to its fixed point (at most [graphMaxIter] rounds, until no
//     score moves by more than 1e-12; it converges, cycles included).
//     A rule that did not fire is not an argument and attacks nothing.
//   - A supersedes B: when both survive, B is not reported as the root
//     cause (A, or whatever supersedes A, is); B becomes a side branch.
//     Supersedes never changes the verdict. It is transitive and must be
//     acyclic.
//
// A fired counter survives when s(a) > SurvivalThreshold·w(a) (plus 1e-9,
// so that a score whose limit is exactly on the threshold does not depend
// on rounding): it kept more than half of its own strength. An unattacked
// counter always survives; a counter attacked by one unattacked full-weight
// counter (s = w/2) does not; a counter whose attacker is itself attacked is
// reinstated. The verdict is [Aggregate] of the surviving counters' facts.
//
// Fail closed: if counters fired but none survived (only possible when
// fired rules attack each other densely, e.g. three rules all attacking each
// other), the verdict is REVIEW with a "graph" fact, never PASS.
//
// With no edges every fired counter is unattacked and survives, so the
// verdict is exactly Aggregate of all facts (property-tested).
//
// Staged evaluation stays exact because a ground rule may not attack a pure
// rule: the survival of pure counters depends on pure facts only.

// SurvivalThreshold is the fraction of its weight a fired counter must keep
// to survive (strictly more than).
const SurvivalThreshold = 0.5

const (
	graphMaxIter = 10000
	graphTol     = 1e-12
	graphMargin  = 1e-9
)

// RuleGraph is the id of the fact added when every fired counter was defeated.
const RuleGraph = "graph"

// EdgeKind is the kind of a defeat-graph edge.
type EdgeKind uint8

const (
	// Attacks means From weakens To when both fire.
	Attacks EdgeKind = 1
	// Supersedes means From, not To, is reported as the root cause.
	Supersedes EdgeKind = 2
)

// String returns "attacks" or "supersedes".
func (k EdgeKind) String() string {
	switch k {
	case Attacks:
		return "attacks"
	case Supersedes:
		return "supersedes"
	}
	return fmt.Sprintf("EdgeKind(%d)", uint8(k))
}

// Edge relates two rules of a catalog by id.
type Edge struct {
	From string
	Kind EdgeKind
	To   string
}

// defeat is a catalog's graph, indexed by entry.
type defeat struct {
	attackers  [][]int   // attackers[i]: entries that attack i
	supers     [][]int   // supers[i]: entries that supersede i, transitively
	weight     []float64 // in (0, 1]
	edges      []Edge    // as declared, for Describe
	attackEdge bool      // at least one attacks edge
}

// NewGraphCatalog builds a catalog (as [NewCatalog] does) decided by a defeat
// graph with the given edges and weights (rule id → weight in (0, 1];
// missing ids weigh 1). It fails closed, naming the problem: an edge naming
// an unknown rule, an unknown edge kind, a rule attacking or superseding
// itself, a duplicate edge, a supersedes cycle, a ground rule attacking a
// pure rule, or a weight outside (0, 1] or for an unknown rule is
// [ErrInvalidGraph].
func NewGraphCatalog(rules []Rule, edges []Edge, weights map[string]float64) (*Catalog, error) {
	c, err := NewCatalog(rules...)
	if err != nil {
		return nil, err
	}
	if err := c.setGraph(edges, weights); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Catalog) setGraph(edges []Edge, weights map[string]float64) error {
	n := len(c.entries)
	idx := make(map[string]int, n)
	for i, e := range c.entries {
		idx[e.id] = i
	}
	g := &defeat{attackers: make([][]int, n), supers: make([][]int, n), weight: make([]float64, n)}
	for i := range g.weight {
		g.weight[i] = 1
	}
	for id, w := range weights {
		i, ok := idx[id]
		if !ok {
			return fmt.Errorf("gates: graph: weight for unknown rule %q: %w", id, ErrInvalidGraph)
		}
		if !(w > 0 && w <= 1) || math.IsNaN(w) {
			return fmt.Errorf("gates: graph: rule %q has weight %v (want 0 < w <= 1): %w", id, w, ErrInvalidGraph)
		}
		g.weight[i] = w
	}
	direct := make([][]int, n) // direct[i]: entries i supersedes
	seen := map[Edge]bool{}
	for _, ed := range edges {
		from, okF := idx[ed.From]
		to, okT := idx[ed.To]
		switch {
		case ed.Kind != Attacks && ed.Kind != Supersedes:
			return fmt.Errorf("gates: graph: edge %q %s %q: %w", ed.From, ed.Kind, ed.To, ErrInvalidGraph)
		case !okF:
			return fmt.Errorf("gates: graph: edge %q %s %q names unknown rule %q: %w", ed.From, ed.Kind, ed.To, ed.From, ErrInvalidGraph)
		case !okT:
			return fmt.Errorf("gates: graph: edge %q %s %q names unknown rule %q: %w", ed.From, ed.Kind, ed.To, ed.To, ErrInvalidGraph)
		case from == to:
			return fmt.Errorf("gates: graph: rule %q %s itself: %w", ed.From, ed.Kind, ErrInvalidGraph)
		case seen[ed]:
			return fmt.Errorf("gates: graph: duplicate edge %q %s %q: %w", ed.From, ed.Kind, ed.To, ErrInvalidGraph)
		}
		seen[ed] = true
		if ed.Kind == Attacks {
			if c.entries[from].stage == StageGround && c.entries[to].stage == StagePure {
				return fmt.Errorf("gates: graph: ground rule %q attacks pure rule %q (staged evaluation could not agree with full evaluation): %w",
					ed.From, ed.To, ErrInvalidGraph)
			}
			g.attackers[to] = append(g.attackers[to], from)
			g.attackEdge = true
		} else {
			direct[from] = append(direct[from], to)
		}
		g.edges = append(g.edges, ed)
	}
	// Transitive closure of supersedes, refusing cycles.
	for a := 0; a < n; a++ {
		reach := make([]bool, n)
		stack := append([]int(nil), direct[a]...)
		for len(stack) > 0 {
			b := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if b == a {
				return fmt.Errorf("gates: graph: supersedes cycle through %q: %w", c.entries[a].id, ErrInvalidGraph)
			}
			if reach[b] {
				continue
			}
			reach[b] = true
			stack = append(stack, direct[b]...)
		}
		for b, ok := range reach {
			if ok {
				g.supers[b] = append(g.supers[b], a)
			}
		}
	}
	c.graph = g
	return nil
}

// scores returns the h-Categoriser fixed point over the fired entries (0 for
// the others).
func (g *defeat) scores(fired []bool) []float64 {
	n := len(fired)
	s := make([]float64, n)
	next := make([]float64, n)
	for i := range s {
		if fired[i] {
			s[i] = g.weight[i]
		}
	}
	for it := 0; it < graphMaxIter; it++ {
		delta := 0.0
		for i := range s {
			if !fired[i] {
				continue
			}
			sum := 0.0
			for _, b := range g.attackers[i] {
				if fired[b] {
					sum += s[b]
				}
			}
			next[i] = g.weight[i] / (1 + sum)
			delta = math.Max(delta, math.Abs(next[i]-s[i]))
		}
		s, next = next, s
		if delta < graphTol {
			break
		}
	}
	return s
}

// survivors returns which fired entries survive.
func (c *Catalog) survivors(fired []bool) []bool {
	if c.graph == nil || !c.graph.attackEdge {
		return fired // every fired entry survives; callers only read it
	}
	alive := make([]bool, len(fired))
	s := c.graph.scores(fired)
	for i := range fired {
		alive[i] = fired[i] && s[i] > SurvivalThreshold*c.graph.weight[i]+graphMargin
	}
	return alive
}

// outcomeOf decides per-entry facts for the given fired set: the verdict's
// facts (survivors in catalog order, plus the fail-closed graph fact) and
// which entries survived.
func (c *Catalog) outcomeOf(per [][]Fact, fired []bool) (facts []Fact, alive []bool) {
	alive = c.survivors(fired)
	n := 0
	for i := range per {
		if alive[i] {
			n += len(per[i])
		}
	}
	facts = make([]Fact, 0, n)
	anyFired, anyAlive := false, false
	for i := range per {
		if fired[i] {
			anyFired = true
		}
		if alive[i] {
			anyAlive = true
			facts = append(facts, per[i]...)
		}
	}
	if anyFired && !anyAlive {
		facts = append(facts, allDefeatedFact(c, fired))
	}
	return facts, alive
}

func allDefeatedFact(c *Catalog, fired []bool) Fact {
	var ids []string
	for i, f := range fired {
		if f {
			ids = append(ids, c.entries[i].id)
		}
	}
	return Fact{Rule: RuleGraph, Level: Review, Where: "graph",
		Expected: "at least one fired rule to survive, or none to fire",
		Actual:   "rules " + strings.Join(ids, ", ") + " fired and defeated each other"}
}

// decide turns per-entry facts into a verdict, feedback and defeated facts.
func (c *Catalog) decide(per [][]Fact) Staged {
	fired := make([]bool, len(per))
	for i, fs := range per {
		fired[i] = len(fs) > 0
	}
	facts, alive := c.outcomeOf(per, fired)
	v := Aggregate(facts)
	var defeated []Fact
	for i := range per {
		if fired[i] && !alive[i] {
			defeated = append(defeated, per[i]...)
		}
	}
	return Staged{Verdict: v, Feedback: c.feedback(per, fired, alive, v), Defeated: defeated}
}
