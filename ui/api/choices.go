package api

import (
	"maps"
	"net/http"
	"slices"

	"github.com/questbox/questbox/engine"
)

// Choices is GET /api/choices: what the dashboard's New-quest form offers
// in its selects, and the defaults a field left empty takes — the values
// `quest new` uses for a flag it is not given. Read-only; it names the
// configured providers, so it needs the reading session the quests need.
type Choices struct {
	Defaults  ChoiceDefaults `json:"defaults"`
	Modes     []string       `json:"modes"`
	Providers []string       `json:"providers"`
	Gates     []string       `json:"gates"`
	Roles     []string       `json:"roles"`
	Presets   []Preset       `json:"presets"`
}

// ChoiceDefaults are the box's defaults for a new quest.
type ChoiceDefaults struct {
	Mode         string   `json:"mode"`
	Provider     string   `json:"provider"`
	Gate         string   `json:"gate"`
	Roles        []string `json:"roles"`
	Checkpoints  []string `json:"checkpoints"`
	MaxAgentRuns int      `json:"max_agent_runs"`
	MaxTries     int      `json:"max_tries"`
	WallClock    string   `json:"wall_clock"`
	TokenBudget  int      `json:"token_budget"`
}

// ChoicesOf is the form's choices on eng with the gate profiles and role
// tables of the box's config (gates and roles may be nil).
func ChoicesOf(eng *engine.Engine, gates, roles []string) Choices {
	d := eng.NewQuestSpec("", "")
	known := []string{engine.RoleScout, engine.RolePOC, engine.RoleStrategist, engine.RoleOwner}
	all := slices.Concat(known, d.Roles, roles)
	slices.Sort(all)
	if len(gates) == 0 {
		gates = []string{d.Gate}
	}
	return Choices{
		Defaults: ChoiceDefaults{Mode: d.Mode, Provider: d.Provider, Gate: d.Gate, Roles: nonNil(d.Roles), Checkpoints: nonNil(d.Checkpoints),
			MaxAgentRuns: d.Limits.MaxAgentRuns, MaxTries: d.Limits.MaxTries, WallClock: d.Limits.WallClock.String(), TokenBudget: d.Limits.TokenBudget},
		Modes:     []string{engine.ModeTeam, engine.ModeSolo},
		Providers: eng.ProviderNames(),
		Gates:     gates,
		Roles:     slices.Compact(all),
		Presets:   Presets,
	}
}

func (s *Server) choices(w http.ResponseWriter, r *http.Request, eng *engine.Engine) error {
	var gates, roles []string
	if c := s.opt.Config; c != nil {
		gates = c.GateNames()
		roles = slices.Sorted(maps.Keys(c.Roles))
	}
	return ok(w, ChoicesOf(eng, gates, roles))
}
