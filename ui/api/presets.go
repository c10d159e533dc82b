package api

import (
	"net/http"
	"slices"
)

// Preset is a named combination of `quest new`'s options (docs/design.md,
// "Councils and Teams"). Flags maps a flag name of `quest new` (without "--")
// to the value the preset gives it; a preset only fills what the request
// leaves out. The CLI's --preset and the dashboard's Preset select read the
// one table, Presets (GET /api/presets serves it).
type Preset struct {
	Name  string            `json:"name"`
	Help  string            `json:"help"`
	Flags map[string]string `json:"flags"`
}

// Presets is the table of presets, in the order the dashboard offers
// them.
var Presets = []Preset{
	// v3/v3.1: a team whose owner turns are a council of two reviewers
	// and one judge.
	{Name: "council", Help: "--mode team --council reviewer:2,judge:1",
		Flags: map[string]string{"mode": "team", "council": "reviewer:2,judge:1"}},
	// v3.2: the owner dispatches Teams (planner -> executer -> accepter).
	{Name: "teams", Help: "--mode team --teams",
		Flags: map[string]string{"mode": "team", "teams": "true"}},
}

// PresetNamed returns the preset called name.
func PresetNamed(name string) (Preset, bool) {
	i := slices.IndexFunc(Presets, func(p Preset) bool { return p.Name == name })
	if i < 0 {
		return Preset{}, false
	}
	return Presets[i], true
}

// PresetNames lists the presets' names, sorted.
func PresetNames() []string {
	names := make([]string, len(Presets))
	for i, p := range Presets {
		names[i] = p.Name
	}
	slices.Sort(names)
	return names
}

// presets is GET /api/presets: the presets of `quest new` (a list of
// Preset), for the dashboard's form.
func (s *Server) presets(w http.ResponseWriter, r *http.Request) {
	s.guard(w, r, func() error { return ok(w, Presets) })
}
