package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/engine/verdict"
	"github.com/questbox/questbox/gates"
	"github.com/questbox/questbox/gates/judge"
)

// web is a Grounder over an in-memory web: a real implementation of the
// interface for tests, with a switch for the network and a fetch counter.
type web struct {
	mu      sync.Mutex // guards all fields
	online  bool
	refuse  bool // every fetch is a transport error
	pages   map[string]string
	fetches int
}

func (w *web) Online(context.Context) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.online
}

func (w *web) Resolve(ctx context.Context, reqs []gates.Request) (gates.GroundFacts, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := gates.GroundFacts{}
	for _, r := range reqs {
		w.fetches++
		switch body, ok := w.pages[r.Target]; {
		case w.refuse:
			out[r.Key()] = gates.Observation{Transport: "connection refused"}
		case !ok:
			out[r.Key()] = gates.Observation{Status: 404}
		default:
			out[r.Key()] = gates.Observation{Status: 200, Body: body}
		}
	}
	return out, nil
}

func (w *web) set(f func(w *web)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	f(w)
}

func citing(source, quote string) string {
	return "```json\n" + fmt.Sprintf(`{"verdict":"conclusion","evidence":"the page settles it for good","citations":[{"source":%q,"quote":%q}],"new_directions":[]}`, source, quote) + "\n```"
}

func groundCatalog(*Quest) (*gates.Catalog, error) {
	return gates.LoadCatalog([]gates.RuleSpec{
		{ID: "contract", Kind: gates.RuleContract, Level: "fail"},
		{ID: "quote", Kind: gates.RuleCitationQuote, Level: "fail"},
	})
}

func TestOfflineDefersThenCompletesUntouched(t *testing.T) {
	w := &web{pages: map[string]string{"https://example.org/a": "The answer is forty-two, said the page."}}
	h := newHarness(t, Options{Catalog: groundCatalog, Ground: func() gates.Grounder { return w }, Online: func() bool { return w.Online(nil) }})
	q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal; s.Mode = ModeSolo })
	res, _ := h.e.Scan(q.ID, []string{"what is the answer"})
	id := res.Added[0]
	r, err := h.e.Submit(context.Background(), q.ID, id, []byte(citing("https://example.org/a", "forty-two")))
	if err != nil || r.Outcome != "DEFERRED" || r.Status != Deferred || r.Tries != 0 {
		t.Fatalf("offline submit: got %+v, %v; want DEFERRED, deferred, no try", r, err)
	}
	if w.fetches != 0 {
		t.Fatalf("offline: %d fetches, want 0", w.fetches)
	}
	h.tick()
	if n := h.node(id); n.Status != Deferred {
		t.Fatalf("still offline: got %s, want deferred", n.Status)
	}
	w.set(func(w *web) { w.online = true })
	h.tick() // back to pending and the kept answer is judged again
	n := h.node(id)
	if n.Status != Explored || n.Tries != 0 || w.fetches != 1 {
		t.Fatalf("back online: got %s tries %d after %d fetches; want explored, no try, 1 fetch", n.Status, n.Tries, w.fetches)
	}
	if got := h.questNow(q.ID).Counters.AgentRuns; got != 1 {
		t.Errorf("agent runs: got %d, want 1 (the replay is not an agent run)", got)
	}
}

func TestStageOneFailMakesNoFetch(t *testing.T) {
	w := &web{online: true}
	h := newHarness(t, Options{Catalog: groundCatalog, Ground: func() gates.Grounder { return w }})
	q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal })
	res, _ := h.e.Scan(q.ID, []string{"x"})
	r, err := h.e.Submit(context.Background(), q.ID, res.Added[0], []byte(`{"verdict":"conclusion"}`))
	if err != nil || r.Outcome != "FAIL" || w.fetches != 0 {
		t.Fatalf("got %+v, %v after %d fetches; want FAIL with no fetch", r, err, w.fetches)
	}
}

func TestQuoteAbsentFromSourceFails(t *testing.T) {
	w := &web{online: true, pages: map[string]string{"https://example.org/a": "Nothing relevant here."}}
	h := newHarness(t, Options{Catalog: groundCatalog, Ground: func() gates.Grounder { return w }})
	q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal })
	res, _ := h.e.Scan(q.ID, []string{"x"})
	r, err := h.e.Submit(context.Background(), q.ID, res.Added[0], []byte(citing("https://example.org/a", "forty-two")))
	if err != nil || r.Outcome != "FAIL" || !strings.Contains(r.Feedback, "forty-two") {
		t.Fatalf("got %+v, %v; want FAIL whose feedback names the quote", r, err)
	}
}

func TestPersistentTransportErrorsBecomeAFail(t *testing.T) {
	w := &web{online: true, refuse: true}
	p := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		return reply(citing("https://example.org/a", "forty-two")), nil
	})
	h := newHarness(t, Options{Catalog: groundCatalog, Ground: func() gates.Grounder { return w }, Providers: map[string]Provider{"p": p}})
	q := h.quest(func(s *QuestSpec) { s.Provider = "p"; s.Mode = ModeSolo; s.Limits.MaxStalled = 0 })
	root := h.nodesByStatus(q.ID)[Pending][0]
	for i := 0; i < verdict.MaxDeferrals+2 && h.node(root).Tries == 0; i++ {
		h.tick()
	}
	n := h.node(root)
	if n.Tries != 1 || n.Facts[0].Rule != "ground" {
		t.Fatalf("after %d refusals: tries %d facts %v; want one FAIL try with a ground fact", verdict.MaxDeferrals, n.Tries, n.Facts)
	}
}

// doubter is an L2 judge that always doubts (it cannot do more).
type doubter struct{ calls int }

func (d *doubter) Batch(ctx context.Context, items []judge.Item, seed uint64) (judge.Batch, error) {
	d.calls++
	var b judge.Batch
	for range items {
		b.Results = append(b.Results, judge.Result{Effect: judge.Doubt, Reason: "the quote does not support the claim", Decided: true})
	}
	return b, nil
}

// Fingerprints implements Judge: both tiers run on the box.
func (d *doubter) Fingerprints() (light, heavy judge.Fingerprint) {
	return judge.Fingerprint{Provider: ProviderDemo, Model: "doubt"}, judge.Fingerprint{Provider: ProviderDemo, Model: "doubt"}
}

func TestJudgeCanOnlyRaiseDoubt(t *testing.T) {
	d := &doubter{}
	h := newHarness(t, Options{Judge: d})
	q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal })
	res, _ := h.e.Scan(q.ID, []string{"x"})
	r, err := h.e.Submit(context.Background(), q.ID, res.Added[0], []byte(citing("doc", "the page")))
	if err != nil || r.Outcome != "REVIEW" || r.Status != AwaitingConsent || d.calls != 1 {
		t.Fatalf("got %+v, %v after %d judge calls; want REVIEW awaiting consent", r, err, d.calls)
	}
}

func TestJudgeCacheRefusesUndecided(t *testing.T) {
	s := mustOpenStore(t, "")
	defer s.Close()
	c := s.JudgeCache()
	if err := c.Put("k", judge.Result{Effect: judge.Doubt}); err == nil {
		t.Fatal("undecided result was cached")
	}
	want := judge.Result{Effect: judge.Clear, Quote: "q", Decided: true}
	if err := c.Put("k", want); err != nil {
		t.Fatal(err)
	}
	got, ok, err := c.Get("k")
	if err != nil || !ok || got != want {
		t.Fatalf("get: got %+v %v %v, want %+v", got, ok, err, want)
	}
	if _, ok, _ := c.Get("other"); ok {
		t.Error("a key never stored was found")
	}
}

// A judgement is written in the group commit, with the result it was
// asked for (the announced write that follows it), not in a commit of its
// own; a Get before that commit finds it in memory, and after it in the
// store.
func TestJudgeCachePutsShareTheResultsCommit(t *testing.T) {
	r := newGroupRig(t)
	r.s.h.DataLatency = time.Hour
	c := r.s.JudgeCache()
	before := r.s.Commits()
	want := map[string]judge.Result{}
	for i := range 5 {
		k := fmt.Sprint("claim", i)
		want[k] = judge.Result{Effect: judge.Clear, Quote: fmt.Sprint("quote ", i), Decided: true}
		if err := c.Put(k, want[k]); err != nil {
			t.Fatal(err)
		}
		if got, ok, err := c.Get(k); err != nil || !ok || got != want[k] {
			t.Fatalf("Get(%s) before the commit: %+v %v %v, want %+v", k, got, ok, err, want[k])
		}
	}
	if got := r.s.Commits() - before; got != 0 {
		t.Fatalf("the judgements committed %d times before the result they wait for", got)
	}
	r.last("result", put("result", "v"))
	if err := r.errs["result"]; err != nil {
		t.Fatal(err)
	}
	if got := r.s.Commits() - before; got != 1 {
		t.Errorf("5 judgements and their result committed %d times, want 1", got)
	}
	if left := r.s.judged.Held(); left != 0 {
		t.Errorf("%d judgements still held in memory after their commit", left)
	}
	for k, w := range want {
		var stored judge.Result
		err := r.s.view(func(tx *store.Tx) error {
			_, err := getJSON(tx.Judge(), []byte(k), &stored)
			return err
		})
		if err != nil || stored != w {
			t.Errorf("%s in the store: %+v, %v; want %+v", k, stored, err, w)
		}
		if got, ok, err := c.Get(k); err != nil || !ok || got != w {
			t.Errorf("Get(%s) after the commit: %+v %v %v, want %+v", k, got, ok, err, w)
		}
	}
}
