package gates

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"pgregory.net/rapid"
)

// fakeGround is a Grounder that answers from a table and counts what it was
// asked. It is a real implementation, not a mock: Resolve answers each
// distinct request once.
type fakeGround struct {
	offline   bool
	transport map[string]bool // request key → answer with a transport error
	failAll   error           // Resolve returns this error

	mu       sync.Mutex
	online   int            // Online calls
	resolves int            // Resolve calls
	asked    map[string]int // request key → times resolved
}

func (g *fakeGround) Online(context.Context) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.online++
	return !g.offline
}

func (g *fakeGround) Resolve(_ context.Context, reqs []Request) (GroundFacts, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.resolves++
	if g.failAll != nil {
		return nil, g.failAll
	}
	if g.asked == nil {
		g.asked = map[string]int{}
	}
	out := GroundFacts{}
	for _, r := range reqs {
		g.asked[r.Key()]++
		out[r.Key()] = fakeObservation(r, g.transport[r.Key()])
	}
	return out, nil
}

// fakeObservation answers deterministically: a URL containing "404" is a
// 404; any other is 200 with the URL as body.
func fakeObservation(r Request, transport bool) Observation {
	if transport {
		return Observation{Transport: "connection refused"}
	}
	if strings.Contains(r.Target, "404") {
		return Observation{Status: 404}
	}
	return Observation{Status: 200, Body: "body of " + r.Target}
}

func (g *fakeGround) calls() (online, resolves, fetches int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, n := range g.asked {
		fetches += n
	}
	return g.online, g.resolves, fetches
}

// urlRule is a ground rule that fetches fixed URLs and fires on a non-200.
type urlRule struct {
	id    string
	level Level
	urls  []string
}

func (r urlRule) ID() string          { return r.id }
func (r urlRule) Level() Level        { return r.level }
func (r urlRule) Stage() Stage        { return StageGround }
func (r urlRule) Description() string { return "fake url rule" }
func (r urlRule) Needs(Input) []Request {
	var out []Request
	for _, u := range r.urls {
		out = append(out, Request{Kind: ReqFetchURL, Target: u})
	}
	return out
}
func (r urlRule) Check(in Input) []Fact {
	var facts []Fact
	for _, req := range r.Needs(in) {
		o, f := observe(r.id, in, req)
		if f != nil {
			facts = append(facts, *f)
			continue
		}
		if o.Status != 200 {
			facts = append(facts, Fact{Where: req.Target, Expected: "200", Actual: itoa(o.Status)})
		}
	}
	return facts
}

func mustCatalog(t interface{ Fatal(...any) }, rules ...Rule) *Catalog {
	c, err := NewCatalog(rules...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// groundFor resolves every need of c for in, as a full evaluation would see it.
func groundFor(c *Catalog, in Input) GroundFacts {
	out := GroundFacts{}
	for _, r := range c.Rules() {
		if gr, ok := r.(GroundRule); ok {
			for _, req := range gr.Needs(in) {
				out[req.Key()] = fakeObservation(req, false)
			}
		}
	}
	return out
}

func TestStagedNoFetchWhenStageOneFails(t *testing.T) {
	c := mustCatalog(t, firing("pure-fail", Fail, StagePure), urlRule{id: "url", level: Fail, urls: []string{"https://a.example/"}})
	g := &fakeGround{}
	got := c.EvaluateStaged(context.Background(), Input{}, g)
	if got.Verdict.Outcome != OutcomeFail || got.Deferred {
		t.Fatalf("got %+v, want FAIL", got)
	}
	if on, res, fetches := g.calls(); on != 0 || res != 0 || fetches != 0 {
		t.Errorf("got %d Online, %d Resolve and %d fetches, want none", on, res, fetches)
	}
	if got.Requests != nil {
		t.Errorf("got requests %v, want nil", got.Requests)
	}
}

func TestStagedOneFetchPerURL(t *testing.T) {
	c := mustCatalog(t,
		urlRule{id: "url-a", level: Fail, urls: []string{"https://same.example/x", "https://same.example/x"}},
		urlRule{id: "url-b", level: Review, urls: []string{"https://same.example/x"}},
	)
	g := &fakeGround{}
	got := c.EvaluateStaged(context.Background(), Input{}, g)
	if got.Verdict.Outcome != OutcomePass {
		t.Fatalf("got %v, want PASS", got.Verdict)
	}
	if _, res, fetches := g.calls(); res != 1 || fetches != 1 {
		t.Errorf("got %d Resolve and %d fetches, want 1 and 1", res, fetches)
	}
	if len(got.Requests) != 1 {
		t.Errorf("got requests %v, want one", got.Requests)
	}
}

func TestStagedDeferred(t *testing.T) {
	url := urlRule{id: "url", level: Fail, urls: []string{"https://a.example/", "https://b.example/"}}
	bKey := Request{Kind: ReqFetchURL, Target: "https://b.example/"}.Key()
	tests := []struct {
		name       string
		rules      []Rule
		g          Grounder
		wantReason string
	}{
		{"offline", []Rule{url}, &fakeGround{offline: true}, "offline"},
		{"review in stage one and offline", []Rule{firing("p", Review, StagePure), url}, &fakeGround{offline: true}, "offline"},
		{"transport error", []Rule{url}, &fakeGround{transport: map[string]bool{bKey: true}}, "connection refused"},
		{"resolve failed", []Rule{url}, &fakeGround{failAll: errors.New("context canceled")}, "context canceled"},
		{"no grounder", []Rule{url}, nil, "no ground resolver"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustCatalog(t, tt.rules...).EvaluateStaged(context.Background(), Input{}, tt.g)
			if !got.Deferred {
				t.Fatalf("got %+v, want deferred", got)
			}
			if !strings.Contains(got.Reason, tt.wantReason) {
				t.Errorf("got reason %q, want it to mention %q", got.Reason, tt.wantReason)
			}
			if got.Verdict.Outcome != 0 {
				t.Errorf("got outcome %v, want the zero verdict", got.Verdict.Outcome)
			}
		})
	}
}

func TestStagedOfflineSkipsResolve(t *testing.T) {
	g := &fakeGround{offline: true}
	mustCatalog(t, urlRule{id: "url", level: Fail, urls: []string{"https://a.example/"}}).EvaluateStaged(context.Background(), Input{}, g)
	if _, res, fetches := g.calls(); res != 0 || fetches != 0 {
		t.Errorf("got %d Resolve and %d fetches while offline, want none", res, fetches)
	}
}

// runRule is a ground rule that runs a program: it needs no network, so it
// is evaluated while offline.
type runRule struct{}

func (runRule) ID() string          { return "run" }
func (runRule) Level() Level        { return Fail }
func (runRule) Stage() Stage        { return StageGround }
func (runRule) Description() string { return "fake run rule" }
func (runRule) Needs(Input) []Request {
	return []Request{{Kind: ReqRun, Argv: []string{"true"}}}
}
func (r runRule) Check(in Input) []Fact {
	if _, f := observe(r.ID(), in, r.Needs(in)[0]); f != nil {
		return []Fact{*f}
	}
	return nil
}

func TestStagedRunWhileOffline(t *testing.T) {
	g := &fakeGround{offline: true}
	got := mustCatalog(t, runRule{}).EvaluateStaged(context.Background(), Input{}, g)
	if got.Deferred || got.Verdict.Outcome != OutcomePass {
		t.Errorf("got %+v, want PASS without deferral", got)
	}
}

func TestGroundRuleWithoutGroundFailsClosed(t *testing.T) {
	c := mustCatalog(t, urlRule{id: "url", level: Review, urls: []string{"https://a.example/"}})
	got := c.Evaluate(Input{})
	if got.Outcome != OutcomeReview || len(got.Facts) != 1 || got.Facts[0].Where != "ground" {
		t.Errorf("got %v, want REVIEW with a ground fact", got)
	}
}

// TestStagedAgreesWithFull: over random catalogs of pure and ground rules,
// staged evaluation (online, no transport errors) gives the outcome of full
// evaluation with every observation supplied, the same facts when stage 2
// ran, and no ground call at all when stage 1 failed.
func TestStagedAgreesWithFull(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 8).Draw(t, "n")
		var rules []Rule
		pureFails := false
		for i := range n {
			id := "r" + itoa(i)
			level := rapid.SampledFrom([]Level{Fail, Review}).Draw(t, "level")
			if rapid.Bool().Draw(t, "ground") {
				var urls []string
				for _, u := range rapid.SliceOfN(rapid.SampledFrom([]string{"https://a/", "https://b/404", "https://c/"}), 0, 3).Draw(t, "urls") {
					urls = append(urls, u)
				}
				rules = append(rules, urlRule{id: id, level: level, urls: urls})
				continue
			}
			if rapid.Bool().Draw(t, "fires") {
				rules = append(rules, firing(id, level, StagePure))
				pureFails = pureFails || level == Fail
			} else {
				rules = append(rules, silent(id))
			}
		}
		c := mustCatalog(t, rules...)
		g := &fakeGround{}
		staged := c.EvaluateStaged(context.Background(), Input{}, g)
		in := Input{}
		in.Ground = groundFor(c, in)
		full := c.Evaluate(in)
		if staged.Deferred {
			t.Fatalf("got deferred (%s), want a verdict", staged.Reason)
		}
		if staged.Verdict.Outcome != full.Outcome {
			t.Fatalf("got staged %v, want full %v", staged.Verdict, full)
		}
		_, res, _ := g.calls()
		if pureFails && res != 0 {
			t.Fatalf("got %d Resolve calls after stage 1 failed, want 0", res)
		}
		if !pureFails && staged.Verdict.String() != full.String() {
			t.Fatalf("got staged facts %v, want %v", staged.Verdict, full)
		}
	})
}
