package daemon

// The L2 judge: the [judge] section's light and heavy tiers, each a
// configured provider adapted to judge.Model, with the store's judge cache.

import (
	"fmt"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/gates/judge"
	"github.com/questbox/questbox/internal/config"
)

// judgeTier builds the model of one tier: its provider adapted by
// engine.JudgeModel, so that its prompts leave through the same
// redaction as the agents' prompts to its vendor. An openai provider is
// built again with the tier's model, so that the model the judge's cache
// fingerprint names is the model that answers; a command provider is used
// as it is (its model is the label its verdicts are cached under).
func (w *wiring) judgeTier(cfg *config.Config, key string, tier judge.TierConfig, getenv func(string) string) (judge.Model, error) {
	p, ok := cfg.Providers[tier.Provider]
	if !ok {
		return nil, fmt.Errorf("%s.provider: %q is not a configured provider", key, tier.Provider)
	}
	if p.Type == config.TypeOpenAI {
		oc := openAIConfig(tier.Provider, p, getenv)
		oc.Model = tier.Model
		op, err := agent.NewOpenAI(oc)
		if err != nil {
			return nil, fmt.Errorf("%s.provider: %q: %w", key, tier.Provider, err)
		}
		return engine.JudgeModel(redactedProvider{p: op, r: w.redact}, cfg.VendorOf(tier.Provider), w.redaction), nil
	}
	prov, ok := w.providers[tier.Provider]
	if !ok {
		return nil, fmt.Errorf("%s.provider: %q cannot run: %w", key, tier.Provider, w.problems[tier.Provider])
	}
	return engine.JudgeModel(prov, cfg.VendorOf(tier.Provider), w.redaction), nil
}

// buildJudgeModels prepares the judge's models when [judge] is configured;
// the judge itself needs the store's cache and is made by newJudge.
func (w *wiring) buildJudgeModels(cfg *config.Config, getenv func(string) string) {
	if cfg.Judge == nil {
		return
	}
	light, err := w.judgeTier(cfg, "judge.light", cfg.Judge.Light, getenv)
	if err != nil {
		w.judgeErr = err
		return
	}
	heavy, err := w.judgeTier(cfg, "judge.heavy", cfg.Judge.Heavy, getenv)
	if err != nil {
		w.judgeErr = err
		return
	}
	w.judgeModels = [2]judge.Model{light, heavy}
}

// newJudge is the L2 judge of the configuration over cache, or nil when
// [judge] is absent. A judge that is configured but cannot be built is an
// error: the daemon does not start without the judge it was told to use.
func (w *wiring) newJudge(cfg *config.Config, cache judge.Cache) (*judge.Judge, error) {
	if cfg.Judge == nil {
		return nil, nil
	}
	if w.judgeErr != nil {
		return nil, usagef("%s", w.judgeErr)
	}
	j, err := judge.New(*cfg.Judge, w.judgeModels[0], w.judgeModels[1], cache)
	if err != nil {
		return nil, usagef("%v", err)
	}
	return j, nil
}
