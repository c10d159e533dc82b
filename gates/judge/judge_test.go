package judge

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/questbox/questbox/gates"
)

// scripted is a fake Model (a real implementation, not a mock). honest
// clears a claim only when every number in it occurs in the evidence,
// quoting the evidence's first line; gullible clears everything; a fixed
// reply is returned as is.
type scripted struct {
	mode  string // honest | gullible | fixed | error
	reply string

	mu      sync.Mutex
	prompts []string
}

func (m *scripted) Judge(_ context.Context, prompt string) (string, error) {
	m.mu.Lock()
	m.prompts = append(m.prompts, prompt)
	m.mu.Unlock()
	claim, evidence := between(prompt, "CLAIM:\n<<<\n", "\n>>>"), between(prompt, "EVIDENCE:\n<<<\n", "\n>>>")
	quote := strings.SplitN(evidence, "\n", 2)[0]
	switch m.mode {
	case "fixed":
		return m.reply, nil
	case "error":
		return "", errors.New("provider unreachable")
	case "gullible":
		return fmt.Sprintf(`{"decision":"clear","quote":%q,"reason":"looks fine"}`, quote), nil
	}
	for _, f := range strings.FieldsFunc(claim, func(r rune) bool { return r < '0' || r > '9' }) {
		if !strings.Contains(evidence, f) {
			return fmt.Sprintf(`{"decision":"doubt","quote":"","reason":"the evidence does not say %s"}`, f), nil
		}
	}
	return fmt.Sprintf(`{"decision":"clear","quote":%q,"reason":"supported"}`, quote), nil
}

func (m *scripted) calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.prompts)
}

func between(s, a, b string) string {
	_, rest, _ := strings.Cut(s, a)
	out, _, _ := strings.Cut(rest, b)
	return out
}

func testConfig() Config {
	return Config{Light: TierConfig{"ollama", "small"}, Heavy: TierConfig{"openai", "big"}, Template: "v1", Canaries: 2, CanaryThreshold: 0}
}

func newJudge(t *testing.T, light, heavy Model, cache Cache) *Judge {
	t.Helper()
	j, err := New(testConfig(), light, heavy, cache)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

var items = []Item{
	{ID: "n1/citations[0]", Claim: "Tesseract scored 91% on 40 invoices.", Evidence: "Tesseract: 91% on 40 invoices.\nPaddleOCR: 95%."},
	{ID: "n2/citations[0]", Claim: "The free plan allows 1000 requests per day.", Evidence: "Free plan: 1000 requests per day.\nPro: 50000."},
}

func TestParse(t *testing.T) {
	const ev = "Tesseract scored 91% on 40 invoices. PaddleOCR scored 95%."
	tests := []struct {
		name        string
		out         string
		wantClear   bool
		wantDecided bool
	}{
		{"clear with quote", `{"decision":"clear","quote":"Tesseract scored 91%","reason":"ok"}`, true, true},
		{"clear with normalised quote", ` {"decision":"clear","quote":"tesseract  SCORED ９１%","reason":"ok"} `, true, true},
		{"doubt", `{"decision":"doubt","quote":"","reason":"contradicts"}`, false, true},
		{"prose and JSON", `Sure! {"decision":"clear","quote":"Tesseract scored 91%","reason":"ok"}`, false, false},
		{"JSON then prose", `{"decision":"clear","quote":"Tesseract scored 91%","reason":"ok"} hope this helps`, false, false},
		{"code fence", "```json\n{\"decision\":\"clear\",\"quote\":\"Tesseract\",\"reason\":\"ok\"}\n```", false, false},
		{"two objects", `{"decision":"clear","quote":"Tesseract","reason":"ok"}{"decision":"clear","quote":"Tesseract","reason":"ok"}`, false, false},
		{"array", `[{"decision":"clear","quote":"Tesseract","reason":"ok"}]`, false, false},
		{"missing reason", `{"decision":"clear","quote":"Tesseract"}`, false, false},
		{"absent quote", `{"decision":"clear","reason":"ok"}`, false, false},
		{"empty quote", `{"decision":"clear","quote":"  ","reason":"ok"}`, false, false},
		{"quote not in evidence", `{"decision":"clear","quote":"Tesseract scored 99%","reason":"ok"}`, false, false},
		{"zero-width quote trick", `{"decision":"clear","quote":"Tesseract\u200b scored","reason":"ok"}`, false, false},
		{"extra member", `{"decision":"clear","quote":"Tesseract","reason":"ok","pass":true}`, false, false},
		{"duplicate member", `{"decision":"doubt","decision":"clear","quote":"Tesseract","reason":"ok"}`, false, false},
		{"non-string member", `{"decision":"clear","quote":"Tesseract","reason":1}`, false, false},
		{"unknown decision", `{"decision":"pass","quote":"Tesseract","reason":"ok"}`, false, false},
		{"capitalised decision", `{"decision":"Clear","quote":"Tesseract","reason":"ok"}`, false, false},
		{"empty", ``, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Parse(tt.out, ev, "j")
			if got.Cleared() != tt.wantClear || got.Decided != tt.wantDecided {
				t.Errorf("got %+v, want clear=%v decided=%v", got, tt.wantClear, tt.wantDecided)
			}
			if !got.Cleared() && got.Effect != Doubt {
				t.Errorf("got effect %v, want doubt", got.Effect)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(*Config)
		wantKey string
	}{
		{"valid", func(*Config) {}, ""},
		{"light provider", func(c *Config) { c.Light.Provider = "" }, "judge.light.provider"},
		{"light model", func(c *Config) { c.Light.Model = " " }, "judge.light.model"},
		{"heavy provider", func(c *Config) { c.Heavy.Provider = "" }, "judge.heavy.provider"},
		{"heavy model", func(c *Config) { c.Heavy.Model = "" }, "judge.heavy.model"},
		{"template missing", func(c *Config) { c.Template = "" }, "judge.template"},
		{"template unknown", func(c *Config) { c.Template = "v9" }, "judge.template"},
		{"no canaries", func(c *Config) { c.Canaries = 0 }, "judge.canaries"},
		{"threshold too high", func(c *Config) { c.CanaryThreshold = 2 }, "judge.canary_threshold"},
		{"threshold negative", func(c *Config) { c.CanaryThreshold = -1 }, "judge.canary_threshold"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := testConfig()
			tt.edit(&c)
			err := c.Validate()
			if tt.wantKey == "" {
				if err != nil {
					t.Fatalf("got %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tt.wantKey) {
				t.Errorf("got %v, want ErrConfig naming %s", err, tt.wantKey)
			}
		})
	}
}

func TestBatchCache(t *testing.T) {
	ctx := context.Background()
	light, heavy := &scripted{mode: "honest"}, &scripted{mode: "honest"}
	cache := &MemCache{}
	j := newJudge(t, light, heavy, cache)

	first, err := j.Batch(ctx, items, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range first.Results {
		if !r.Cleared() {
			t.Fatalf("item %d: got %+v, want clear", i, r)
		}
	}
	if want := len(items) + 2; first.Calls != want || light.calls() != want {
		t.Fatalf("got %d calls, want %d (items and canaries)", first.Calls, want)
	}
	if heavy.calls() != 0 {
		t.Fatalf("got %d heavy calls, want 0: the light judge caught its canaries", heavy.calls())
	}

	tests := []struct {
		name      string
		judge     *Judge
		items     []Item
		wantCalls int
		wantHits  int
	}{
		{"unchanged pairs come from the cache", j, items, 0, 2},
		{"one changed byte of evidence is judged again", j, []Item{items[0], {Claim: items[1].Claim, Evidence: items[1].Evidence + " "}}, 1 + 2, 1},
		{"a changed template re-judges everything", j.WithTemplate(Template{Version: "v1-test", Text: TemplateV1().Text + "\nBe strict."}), items, 2 + 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := light.calls()
			b, err := tt.judge.Batch(ctx, tt.items, 2)
			if err != nil {
				t.Fatal(err)
			}
			if got := light.calls() - before; got != tt.wantCalls || b.Calls != tt.wantCalls {
				t.Errorf("got %d model calls (batch says %d), want %d", got, b.Calls, tt.wantCalls)
			}
			if b.Cached != tt.wantHits {
				t.Errorf("got %d cache hits, want %d", b.Cached, tt.wantHits)
			}
		})
	}
}

func TestUndecidedNeverCached(t *testing.T) {
	for _, m := range []*scripted{{mode: "fixed", reply: `ok {"decision":"clear","quote":"x","reason":"r"}`}, {mode: "error"}} {
		cache := &MemCache{}
		b, err := newJudge(t, m, m, cache).Batch(context.Background(), items, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range b.Results {
			if r.Cleared() || r.Decided {
				t.Errorf("%s: got %+v, want an undecided doubt", m.mode, r)
			}
		}
		if cache.Len() != 0 {
			t.Errorf("%s: got %d cache entries, want 0", m.mode, cache.Len())
		}
	}
	if err := (&MemCache{}).Put("k", Result{Effect: Doubt}); !errors.Is(err, ErrUndecided) {
		t.Errorf("got %v, want ErrUndecided", err)
	}
}

func TestCanaryEscalation(t *testing.T) {
	tests := []struct {
		name         string
		light, heavy *scripted
		wantTiers    []Tier
		wantClear    bool
		wantCached   int
		wantHeavyOps bool
	}{
		{"light catches canaries", &scripted{mode: "honest"}, &scripted{mode: "honest"}, nil, true, 2, false},
		{"light misses, heavy catches", &scripted{mode: "gullible"}, &scripted{mode: "honest"}, []Tier{Heavy}, true, 2, true},
		{"both miss: a human decides", &scripted{mode: "gullible"}, &scripted{mode: "gullible"}, []Tier{Heavy, Human}, false, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cache := &MemCache{}
			b, err := newJudge(t, tt.light, tt.heavy, cache).Batch(context.Background(), items, 7)
			if err != nil {
				t.Fatal(err)
			}
			var tiers []Tier
			for _, e := range b.Escalations {
				tiers = append(tiers, e.To)
			}
			if fmt.Sprint(tiers) != fmt.Sprint(tt.wantTiers) {
				t.Errorf("got escalations %v, want %v", tiers, tt.wantTiers)
			}
			for i, r := range b.Results {
				if r.Cleared() != tt.wantClear {
					t.Errorf("item %d: got %+v, want clear=%v", i, r, tt.wantClear)
				}
			}
			if cache.Len() != tt.wantCached {
				t.Errorf("got %d cached, want %d", cache.Len(), tt.wantCached)
			}
			if (tt.heavy.calls() > 0) != tt.wantHeavyOps {
				t.Errorf("got %d heavy calls, want some=%v", tt.heavy.calls(), tt.wantHeavyOps)
			}
			if h, ok := b.Human(); ok && (!strings.Contains(h.Reason, "canaries") || len(h.Items) != len(items)) {
				t.Errorf("got human escalation %+v, want one naming the canaries for every item", h)
			}
			// Whatever happened, L2 cannot lift a verdict: with an L1 PASS
			// the combination passes only if every result is clear.
			v := Combine(gates.Aggregate(nil), b.Results...)
			if (v.Outcome == gates.OutcomePass) != tt.wantClear {
				t.Errorf("got %v, want PASS=%v", v.Outcome, tt.wantClear)
			}
		})
	}
}

func TestDoubtGoesToHeavyThenHuman(t *testing.T) {
	bad := []Item{items[0], {ID: "n3", Claim: "It costs 12 euros.", Evidence: "It costs 15 euros.\n"}}
	b, err := newJudge(t, &scripted{mode: "honest"}, &scripted{mode: "honest"}, &MemCache{}).Batch(context.Background(), bad, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Escalations) != 2 || b.Escalations[0].To != Heavy || b.Escalations[1].To != Human || fmt.Sprint(b.Escalations[1].Items) != "[1]" {
		t.Fatalf("got %+v, want item 1 escalated to heavy and then to a human", b.Escalations)
	}
	if !b.Results[0].Cleared() || b.Results[1].Cleared() {
		t.Errorf("got %+v, want item 0 clear and item 1 doubted", b.Results)
	}
}

func TestMakeCanaries(t *testing.T) {
	a, b := MakeCanaries(items, 5, 42), MakeCanaries(items, 5, 42)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("got different canaries for the same seed")
	}
	for _, c := range a {
		if strings.Contains(strings.ToLower(c.ID+c.Claim+c.Evidence), "canary") || c.Claim == "" || c.Evidence == "" {
			t.Errorf("got canary %+v, want one shaped like a real item", c)
		}
		for _, it := range items {
			if c.Claim == it.Claim && c.Evidence == it.Evidence {
				t.Errorf("got a canary identical to a real item: %+v", c)
			}
		}
	}
	if got := MakeCanaries(nil, 3, 1); len(got) != 3 {
		t.Errorf("got %d canaries without real items, want 3 built-in ones", len(got))
	}
}

func TestCacheKey(t *testing.T) {
	fp := Fingerprint{"p", "m", "t"}
	base := CacheKey("c", "e", fp)
	tests := []struct {
		name string
		key  string
	}{
		{"claim", CacheKey("c2", "e", fp)},
		{"evidence", CacheKey("c", "e2", fp)},
		{"provider", CacheKey("c", "e", Fingerprint{"p2", "m", "t"})},
		{"model", CacheKey("c", "e", Fingerprint{"p", "m2", "t"})},
		{"template", CacheKey("c", "e", Fingerprint{"p", "m", "t2"})},
		{"boundary shift", CacheKey("ce", "", fp)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.key == base {
				t.Errorf("got the same key after changing the %s", tt.name)
			}
		})
	}
}

func TestItemsFromAnswer(t *testing.T) {
	a := gates.Answer{Evidence: "claim", Citations: []gates.Citation{{Source: "https://a/", Quote: "q"}, {Source: "gone", Quote: "q"}}}
	got := ItemsFromAnswer("n1", a, map[string]string{"https://a/": "body"})
	want := []Item{{ID: "n1/citations[0]", Claim: "claim", Evidence: "body"}, {ID: "n1/citations[1]", Claim: "claim", Evidence: ""}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
