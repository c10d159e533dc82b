package gates

import (
	"context"
	"fmt"
)

// Grounder answers ground requests for one evaluation. gates/ground provides
// the real one (a per-evaluation Snapshot over injected resolvers); tests use
// fakes. Implementations must be safe for concurrent use.
type Grounder interface {
	// Online reports whether the box believes it is online. It must be
	// cheap (cached); while it is false no network request is resolved.
	Online(ctx context.Context) bool
	// Resolve answers every request, each at most once, and returns the
	// observations keyed by Request.Key. Per-request failures are recorded
	// in the Observation (Transport or Err); an error return means the
	// resolution as a whole could not run (for example ctx was cancelled)
	// and defers the evaluation.
	Resolve(ctx context.Context, reqs []Request) (GroundFacts, error)
}

// Staged is the result of [Catalog.EvaluateStaged].
//
// When Deferred is true, Verdict is the zero value and must not be used:
// the network stage could not run (the box is offline, or a needed request
// had a transport error), which is not a FAIL. The engine moves the node to
// deferred without consuming a try, and evaluates it again later.
type Staged struct {
	Verdict  Verdict
	Feedback Feedback  // root cause and how to flip the verdict; empty when PASS or Deferred
	Defeated []Fact    // facts of counters the defeat graph defeated (none without edges)
	Deferred bool      // the ground stage could not run; see Reason
	Reason   string    // why it was deferred
	Requests []Request // what the ground stage needed; nil if it was not reached
}

// EvaluateStaged evaluates in stage by stage, cheapest first (docs/design.md,
// "Staged evaluation and ground"):
//
//  1. The pure rules run. If they already give FAIL, the result is returned
//     and g is never called: no network request is made for an answer that
//     has failed anyway.
//  2. Otherwise the requests of the ground rules ([GroundRule.Needs]) are
//     collected and deduplicated by [Request.Key]. If any of them needs the
//     network and g reports offline (or g is nil), the result is Deferred
//     without calling Resolve. If Resolve fails, or any needed observation
//     is missing or has a Transport error, the result is Deferred.
//  3. Otherwise the ground rules run with the observations in Input.Ground,
//     and the facts of both stages are decided together, in catalog order.
//
// Staged and full evaluation agree: when EvaluateStaged is not deferred, its
// outcome equals that of [Catalog.Evaluate] on the same input with
// Input.Ground holding the same observations, and when stage 2 runs, its
// facts are identical too. (With a defeat graph this holds because a ground
// rule may not attack a pure rule; see [LoadCatalog].)
func (c *Catalog) EvaluateStaged(ctx context.Context, in Input, g Grounder) Staged {
	if c == nil || len(c.entries) == 0 {
		return c.staged(c.run(in, 0))
	}
	in.memo = &parseMemo{}
	per := make([][]Fact, len(c.entries))
	c.runInto(per, nil, in, StagePure)
	first := c.decide(per)
	if first.Verdict.Outcome == OutcomeFail || !c.hasStage(StageGround) {
		return first
	}
	var (
		reqs    []Request
		seen    = map[string]bool{}
		network bool
	)
	for i, e := range c.entries {
		if e.stage != StageGround {
			continue
		}
		gr, ok := e.rule.(GroundRule)
		if !ok {
			continue
		}
		got, f := needsSafely(gr, e.id, in)
		if f != nil {
			per[i] = []Fact{*f}
			continue
		}
		for _, r := range got {
			if k := r.Key(); !seen[k] {
				seen[k] = true
				reqs = append(reqs, r)
				network = network || r.Kind.Network()
			}
		}
	}
	if len(reqs) > 0 {
		deferred := func(why string) Staged { return Staged{Deferred: true, Reason: why, Requests: reqs} }
		if g == nil {
			return deferred("no ground resolver is configured")
		}
		if network && !g.Online(ctx) {
			return deferred("the box is offline")
		}
		facts, err := g.Resolve(ctx, reqs)
		if err != nil {
			return deferred("ground: " + err.Error())
		}
		for _, r := range reqs {
			o, ok := facts.Get(r)
			switch {
			case !ok:
				return deferred("ground gave no answer for " + r.String())
			case o.Transport != "":
				return deferred(fmt.Sprintf("%s: transport error: %s", r, o.Transport))
			}
		}
		in.Ground = facts
	}
	for i, e := range c.entries {
		if e.stage == StageGround && per[i] == nil {
			per[i] = c.check(e, in)
		}
	}
	s := c.decide(per)
	s.Requests = reqs
	return s
}

// needsSafely calls r.Needs, turning a panic into a Fail fact of the rule.
func needsSafely(r GroundRule, id string, in Input) (reqs []Request, f *Fact) {
	defer func() {
		if p := recover(); p != nil {
			f = &Fact{Rule: id, Level: Fail, Where: "rule", Expected: "the rule to list its ground needs",
				Actual: clip(fmt.Sprintf("rule %s panicked in Needs: %v", id, p), 300)}
		}
	}()
	return r.Needs(in), nil
}

func (c *Catalog) hasStage(s Stage) bool {
	for _, e := range c.entries {
		if e.stage == s {
			return true
		}
	}
	return false
}
