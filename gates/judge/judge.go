package judge

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/questbox/questbox/gates"
)

// Model is one AI judge as the engine adapts a provider: it answers a
// prompt with raw text. It must honour ctx and be safe for concurrent use.
type Model interface {
	Judge(ctx context.Context, prompt string) (string, error)
}

// TierConfig names the provider and model of one judge tier.
type TierConfig struct {
	// Provider names the configured provider ([providers.NAME]) the
	// tier's judge runs on.
	Provider string `json:"provider" toml:"provider"`
	// Model is the model asked for: sent to an openai provider in place
	// of its own model, and part of the judge cache's key either way.
	Model string `json:"model" toml:"model"`
}

// Config is the judge configuration (the [judge] table). Every field is
// required; there is no field or flag that skips judges.
type Config struct {
	// Light is the cheap judge that sees every fresh pair.
	Light TierConfig `json:"light" toml:"light"`
	// Heavy is the strong judge for doubted pairs and for batches whose
	// light judge missed a canary.
	Heavy TierConfig `json:"heavy" toml:"heavy"`
	// Template is the judge prompt template's version, e.g. "v1".
	Template string `json:"template" toml:"template"`
	// Canaries is how many known-bad pairs are mixed into every batch that
	// has fresh work (at least 1).
	Canaries int `json:"canaries" toml:"canaries"`
	// CanaryThreshold is how many canaries a judge may clear (miss) before
	// the batch escalates: misses > threshold escalates. 0 <= it < Canaries.
	CanaryThreshold int `json:"canary_threshold" toml:"canary_threshold"`
}

// ErrConfig is returned by Config.Validate.
var ErrConfig = errors.New("invalid judge configuration")

// Validate reports the first missing or invalid key, named as in the
// configuration file (for example "judge.heavy.model").
func (c Config) Validate() error {
	bad := func(key, why string) error { return fmt.Errorf("judge: %s %s: %w", key, why, ErrConfig) }
	for _, kv := range []struct{ key, v string }{
		{"judge.light.provider", c.Light.Provider}, {"judge.light.model", c.Light.Model},
		{"judge.heavy.provider", c.Heavy.Provider}, {"judge.heavy.model", c.Heavy.Model},
		{"judge.template", c.Template},
	} {
		if strings.TrimSpace(kv.v) == "" {
			return bad(kv.key, "is missing")
		}
	}
	if _, err := TemplateByVersion(c.Template); err != nil {
		return bad("judge.template", fmt.Sprintf("is %q (known: v1)", c.Template))
	}
	if c.Canaries < 1 {
		return bad("judge.canaries", fmt.Sprintf("is %d (want at least 1)", c.Canaries))
	}
	if c.CanaryThreshold < 0 || c.CanaryThreshold >= c.Canaries {
		return bad("judge.canary_threshold", fmt.Sprintf("is %d (want 0 <= threshold < canaries = %d)", c.CanaryThreshold, c.Canaries))
	}
	return nil
}

// Tier is a level of escalation.
type Tier uint8

const (
	// Light is the cheap judge that sees every fresh pair.
	Light Tier = 1
	// Heavy is the strong judge for doubted pairs and for batches whose light
	// judge missed canaries.
	Heavy Tier = 2
	// Human is the owner, asked through a consent request (LED, MQTT,
	// dashboard).
	Human Tier = 3
)

// String returns "light", "heavy" or "human".
func (t Tier) String() string {
	switch t {
	case Light:
		return "light"
	case Heavy:
		return "heavy"
	case Human:
		return "human"
	}
	return fmt.Sprintf("Tier(%d)", uint8(t))
}

// Escalation records that work moved up a tier, and why. An escalation To
// Human is what the engine turns into a consent request with Reason.
type Escalation struct {
	To     Tier   `json:"to"`
	Reason string `json:"reason"`
	Items  []int  `json:"items"` // indexes into the batch's items
}

// Batch is the outcome of [Judge.Batch].
type Batch struct {
	Results     []Result     // aligned with the items; Combine them with the L1 verdict
	Escalations []Escalation // in order: to heavy, then to human
	Calls       int          // model calls made, canaries included
	Cached      int          // items answered from the cache
}

// Human returns the escalation to a human, if the batch reached one.
func (b Batch) Human() (Escalation, bool) {
	for _, e := range b.Escalations {
		if e.To == Human {
			return e, true
		}
	}
	return Escalation{}, false
}

// Judge runs the L2 discipline over batches of pairs. Safe for concurrent
// use if its Models and Cache are.
type Judge struct {
	cfg          Config
	tmpl         Template
	light, heavy Model
	lightFP      Fingerprint
	heavyFP      Fingerprint
	cache        Cache
}

// New validates cfg and returns a judge using the given models and cache.
func New(cfg Config, light, heavy Model, cache Cache) (*Judge, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if light == nil || heavy == nil || cache == nil {
		return nil, fmt.Errorf("judge: a light model, a heavy model and a cache are required: %w", ErrConfig)
	}
	tmpl, _ := TemplateByVersion(cfg.Template)
	return &Judge{cfg: cfg, tmpl: tmpl, light: light, heavy: heavy, cache: cache,
		lightFP: Fingerprint{cfg.Light.Provider, cfg.Light.Model, tmpl.Hash()},
		heavyFP: Fingerprint{cfg.Heavy.Provider, cfg.Heavy.Model, tmpl.Hash()},
	}, nil
}

// WithTemplate returns a copy of j that uses t as its prompt. The
// fingerprints change with t, so everything is judged again.
func (j *Judge) WithTemplate(t Template) *Judge {
	c := *j
	c.tmpl = t
	c.lightFP.Template, c.heavyFP.Template = t.Hash(), t.Hash()
	return &c
}

// Fingerprints returns the light and heavy judges' fingerprints.
func (j *Judge) Fingerprints() (light, heavy Fingerprint) { return j.lightFP, j.heavyFP }

// Batch judges items (docs/design.md, "Judge discipline"):
//
//  1. Each item is looked up in the cache, under the heavy judge's key and
//     then the light judge's. Hits cost no call. If every item hits, the
//     batch ends: no fresh work, no canaries.
//  2. The fresh items are mixed with cfg.Canaries canaries ([MakeCanaries]
//     with seed) in a seeded shuffle and judged by the light model.
//  3. If the light model cleared more canaries than the threshold, the
//     batch escalates to the heavy model, which judges every fresh item
//     again with new canaries; if it also misses too many, the batch
//     escalates to a human and every fresh item is an undecided Doubt.
//  4. Otherwise the items the light model did not clear go to the heavy
//     model (with canaries again); those it does not clear escalate to a
//     human.
//
// Only decided results of a judge that passed its canaries are cached, under
// that judge's key; light doubts are not cached (their final answer is the
// heavy one). Batch returns an error only when ctx ends; the results are
// then undecided Doubts where no answer was obtained.
func (j *Judge) Batch(ctx context.Context, items []Item, seed uint64) (Batch, error) {
	b := Batch{Results: make([]Result, len(items))}
	keys := make([][2]string, len(items))
	var fresh []int
	for i, it := range items {
		claim, ev := Hash(it.Claim), Hash(it.Evidence)
		keys[i] = [2]string{CacheKey(claim, ev, j.lightFP), CacheKey(claim, ev, j.heavyFP)}
		if r, ok := j.lookup(keys[i][1]); ok {
			b.Results[i], b.Cached = r, b.Cached+1
			continue
		}
		if r, ok := j.lookup(keys[i][0]); ok {
			b.Results[i], b.Cached = r, b.Cached+1
			continue
		}
		fresh = append(fresh, i)
	}
	if len(fresh) == 0 {
		return b, nil
	}
	// Light pass.
	res, misses, err := j.round(ctx, j.light, j.lightFP, items, fresh, seed, &b)
	if err != nil {
		return b, err
	}
	if misses > j.cfg.CanaryThreshold {
		b.Escalations = append(b.Escalations, Escalation{To: Heavy, Items: fresh,
			Reason: fmt.Sprintf("the light judge %s cleared %d of %d known-bad canaries (threshold %d)", j.lightFP, misses, j.cfg.Canaries, j.cfg.CanaryThreshold)})
		return j.heavyRound(ctx, items, fresh, keys, seed+1, &b)
	}
	var doubted []int
	for k, i := range fresh {
		b.Results[i] = res[k]
		if res[k].Cleared() {
			j.store(keys[i][0], res[k])
		} else {
			doubted = append(doubted, i)
		}
	}
	if len(doubted) == 0 {
		return b, nil
	}
	b.Escalations = append(b.Escalations, Escalation{To: Heavy, Items: doubted,
		Reason: fmt.Sprintf("the light judge %s did not clear %d item(s)", j.lightFP, len(doubted))})
	return j.heavyRound(ctx, items, doubted, keys, seed+1, &b)
}

// heavyRound judges idx with the heavy model and escalates to a human what
// it does not clear, or everything if it misses canaries.
func (j *Judge) heavyRound(ctx context.Context, items []Item, idx []int, keys [][2]string, seed uint64, b *Batch) (Batch, error) {
	res, misses, err := j.round(ctx, j.heavy, j.heavyFP, items, idx, seed, b)
	if err != nil {
		return *b, err
	}
	if misses > j.cfg.CanaryThreshold {
		reason := fmt.Sprintf("the heavy judge %s cleared %d of %d known-bad canaries (threshold %d): a human must check these items", j.heavyFP, misses, j.cfg.Canaries, j.cfg.CanaryThreshold)
		for _, i := range idx {
			b.Results[i] = doubtf(j.heavyFP.String(), "%s", reason)
		}
		b.Escalations = append(b.Escalations, Escalation{To: Human, Items: idx, Reason: reason})
		return *b, nil
	}
	var human []int
	var reasons []string
	for k, i := range idx {
		b.Results[i] = res[k]
		j.store(keys[i][1], res[k])
		if !res[k].Cleared() {
			human = append(human, i)
			reasons = append(reasons, res[k].Reason)
		}
	}
	if len(human) > 0 {
		b.Escalations = append(b.Escalations, Escalation{To: Human, Items: human,
			Reason: fmt.Sprintf("the heavy judge %s doubted %d item(s): %s", j.heavyFP, len(human), strings.Join(reasons, "; "))})
	}
	return *b, nil
}

// round judges the items idx mixed with fresh canaries, in a shuffled
// order, and returns their results (aligned with idx) and how many canaries
// were cleared.
func (j *Judge) round(ctx context.Context, m Model, fp Fingerprint, items []Item, idx []int, seed uint64, b *Batch) ([]Result, int, error) {
	real := make([]Item, len(idx))
	for k, i := range idx {
		real[k] = items[i]
	}
	canaries := MakeCanaries(real, j.cfg.Canaries, seed)
	type job struct {
		it     Item
		canary bool
		k      int
	}
	jobs := make([]job, 0, len(real)+len(canaries))
	for k, it := range real {
		jobs = append(jobs, job{it, false, k})
	}
	for _, c := range canaries {
		jobs = append(jobs, job{c, true, -1})
	}
	rng := rand.New(rand.NewPCG(seed, ^seed))
	rng.Shuffle(len(jobs), func(a, c int) { jobs[a], jobs[c] = jobs[c], jobs[a] })
	out := make([]Result, len(real))
	for k := range out {
		out[k] = doubtf(fp.String(), "not judged")
	}
	misses := 0
	for _, jb := range jobs {
		if err := ctx.Err(); err != nil {
			return out, misses, fmt.Errorf("judge: batch interrupted: %w", context.Cause(ctx))
		}
		b.Calls++
		text, err := m.Judge(ctx, j.tmpl.Render(jb.it.Claim, jb.it.Evidence))
		var r Result
		if err != nil {
			r = doubtf(fp.String(), "the judge call failed: %v", err)
		} else {
			r = Parse(text, jb.it.Evidence, fp.String())
		}
		if jb.canary {
			if r.Cleared() {
				misses++
			}
			continue
		}
		out[jb.k] = r
	}
	return out, misses, nil
}

func (j *Judge) lookup(key string) (Result, bool) {
	r, ok, err := j.cache.Get(key)
	if err != nil || !ok || !r.Decided {
		return Result{}, false // a broken cache is a miss: judge again
	}
	return r, true
}

func (j *Judge) store(key string, r Result) {
	if r.Decided {
		_ = j.cache.Put(key, r) // a failed Put costs a re-judgement later, nothing more
	}
}

// ItemsFromAnswer derives what must be judged from the data (docs/design.md,
// "Judge discipline": fail-closed scope), not from a declaration: one item
// per citation, whose claim is the answer's evidence and whose evidence is
// the cited source's text from sources (a fetched body or a known document).
// A citation whose source text is missing gets empty evidence, which no judge
// can clear.
func ItemsFromAnswer(nodeID string, a gates.Answer, sources map[string]string) []Item {
	out := make([]Item, 0, len(a.Citations))
	for i, c := range a.Citations {
		out = append(out, Item{ID: fmt.Sprintf("%s/citations[%d]", nodeID, i), Claim: a.Evidence, Evidence: sources[c.Source]})
	}
	return out
}
