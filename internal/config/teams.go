package config

import (
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/questbox/questbox/engine"
)

// Team configures one team_kind of a Teams quest (`quest new --teams`):
//
//	[teams.scout]
//	accept = "names the winning engine with its measured score"
type Team struct {
	// Accept is the criteria the Team's accepter judges the deliverable
	// against; it is copied into every Teams quest at creation, so that
	// changing the file never changes a quest already running.
	Accept string `toml:"accept"`
}

// TeamAccept is the accept criteria per team_kind, for the engine's
// quest defaults; nil when the file has no [teams] table.
func (c *Config) TeamAccept() map[string]string {
	if len(c.Teams) == 0 {
		return nil
	}
	out := make(map[string]string, len(c.Teams))
	for k, t := range c.Teams {
		out[k] = t.Accept
	}
	return out
}

// validateTeams checks [teams.KIND]: KIND is one of engine.TeamKinds and
// accept is not blank (a Team judged against nothing would accept
// anything its accepter likes).
func (c *Config) validateTeams(p *problems) {
	for _, kind := range sortedKeys(c.Teams) {
		base := toml.Key{"teams", kind}.String()
		if !oneOf(kind, engine.TeamKinds...) {
			p.add(base, "team kind %q is not one of %s", kind, strings.Join(engine.TeamKinds, ", "))
			continue
		}
		if strings.TrimSpace(c.Teams[kind].Accept) == "" {
			p.add(base+".accept", "missing or blank; a Team's accepter judges the deliverable against it")
		}
	}
}
