package config

import (
	"fmt"
	"strings"
)

// Council lists the providers of a council's members (docs/design.md,
// "Councils and Teams", `quest new --council reviewer:R,judge:J`): reviewer i
// takes Reviewers[i], judge i Judges[i], cycling when the council has more
// members than the list has names. An empty list gives those members the
// quest's own provider. Different model families are the point: no model
// grades its own homework.
//
//	[council]
//	reviewers = ["gemini-cli", "local-llama"]
//	judges    = ["codex"]
type Council struct {
	// Reviewers are the providers of the council's reviewers, in turn.
	Reviewers []string `toml:"reviewers"`
	// Judges are the providers of the council's judges, in turn.
	Judges []string `toml:"judges"`
}

// validate checks that every member provider is one that runs an agent:
// configured under [providers], or the built-in demo (external spawns
// nothing, so it cannot sit on a council).
func (k *Council) validate(c *Config, p *problems) {
	for _, list := range []struct {
		key   string
		names []string
	}{{"council.reviewers", k.Reviewers}, {"council.judges", k.Judges}} {
		for i, name := range list.names {
			key := fmt.Sprintf("%s[%d]", list.key, i)
			switch {
			case strings.TrimSpace(name) == "":
				p.add(key, "empty; name a provider configured under [providers], or demo")
			case name == ProviderExternal:
				p.add(key, "%q spawns nothing and cannot sit on a council; name a provider configured under [providers], or demo", name)
			case !c.HasProvider(name):
				configured := "none configured"
				if len(c.Providers) > 0 {
					configured = "configured: " + strings.Join(sortedKeys(c.Providers), ", ")
				}
				p.add(key, "%q is not a provider (built in: demo; %s)", name, configured)
			}
		}
	}
}
