package daemon

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/ui/metrics"
)

// usageMeter adds up what each provider's runs used since the daemon
// started, for the metrics (questbox_agent_tokens_total and
// questbox_agent_cost_usd_total). The store keeps each run's own figures;
// this is only the running total a scrape reads.
type usageMeter struct {
	mu sync.Mutex // guards by
	by map[string]*metrics.ProviderUsage
}

func newUsageMeter() *usageMeter {
	return &usageMeter{by: map[string]*metrics.ProviderUsage{}}
}

// add counts one run of provider.
func (m *usageMeter) add(provider string, r agent.Reply) {
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.by[provider]
	if u == nil {
		u = &metrics.ProviderUsage{Provider: provider}
		m.by[provider] = u
	}
	u.Tokens += uint64(max(r.Tokens, 0))
	u.CostUSD += r.CostUSD
}

// Usage is every provider's totals, by name.
func (m *usageMeter) Usage() []metrics.ProviderUsage {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]metrics.ProviderUsage, 0, len(m.by))
	for _, u := range m.by {
		out = append(out, *u)
	}
	slices.SortFunc(out, func(a, b metrics.ProviderUsage) int { return strings.Compare(a.Provider, b.Provider) })
	return out
}

// meteredProvider counts what each run of its provider used.
type meteredProvider struct {
	p     engine.Provider
	name  string
	meter *usageMeter
}

// Run implements engine.Provider: a failed run counts what it reported
// too, as the token budget does.
func (p meteredProvider) Run(ctx context.Context, req agent.Request) (agent.Reply, error) {
	rep, err := p.p.Run(ctx, req)
	p.meter.add(p.name, rep)
	return rep, err
}

// Check implements engine.ProviderChecker when the provider does.
func (p meteredProvider) Check() error {
	if c, ok := p.p.(engine.ProviderChecker); ok {
		return c.Check()
	}
	return nil
}
