package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/questbox/questbox/gates"
)

// GateNames lists the gate profiles a quest may use, sorted: "default"
// (built in, or replaced by [gates.default]) and every [gates.NAME].
func (c *Config) GateNames() []string {
	names := slices.Collect(maps.Keys(c.Gates))
	if _, ok := c.Gates[DefaultGate]; !ok {
		names = append(names, DefaultGate)
	}
	slices.Sort(names)
	return names
}

// HasGate reports whether name is a gate profile (see [Config.GateNames]).
func (c *Config) HasGate(name string) bool {
	_, ok := c.Gates[name]
	return ok || name == DefaultGate
}

// Catalog builds the catalog of the gate profile name: the configured
// [gates.NAME] if there is one, else for "default" gates.DefaultCatalog.
// Loading validated every profile, so for a Config from [Load] or [Parse]
// the only error is [ErrUnknownGate]. Each call builds a new catalog;
// callers that evaluate often cache it (a Catalog is immutable).
func (c *Config) Catalog(name string) (*gates.Catalog, error) {
	p, ok := c.Gates[name]
	switch {
	case ok:
		cat, err := gates.LoadCatalog(p.Rules)
		if err != nil {
			return nil, fmt.Errorf("gate profile %q: %w", name, err)
		}
		return cat, nil
	case name == DefaultGate:
		return gates.DefaultCatalog(), nil
	}
	return nil, fmt.Errorf("gate profile %q is not in the configuration (known: %s): %w",
		name, strings.Join(c.GateNames(), ", "), ErrUnknownGate)
}

// validateGates checks every profile: its name, then each rule on its own
// (so that a problem names gates.NAME.rules[i]), duplicate ids and edges to
// unknown rules, and finally the whole catalog with gates.LoadCatalog, whose
// graph checks (supersedes cycles, a ground rule attacking a pure rule)
// need every rule at once.
func (c *Config) validateGates(p *problems) {
	for _, name := range sortedKeys(c.Gates) {
		base := toml.Key{"gates", name}.String()
		if !idPattern.MatchString(name) {
			p.add(base, "profile name %q must match [a-z0-9_-]+", name)
			continue
		}
		rules := c.Gates[name].Rules
		if len(rules) == 0 {
			what := "empty"
			if !p.set(base+".rules", false) {
				what = "missing"
			}
			p.add(base+".rules", "%s; a gate profile needs at least one rule (kinds: %s)", what, strings.Join(kindNames(), ", "))
			continue
		}
		before := len(p.errs)
		ids := map[string]int{}
		for i, r := range rules {
			at := fmt.Sprintf("%s.rules[%d]", base, i)
			missing := false
			for _, k := range []struct {
				key, why string
				set      bool
			}{
				{"id", "every rule needs an id: verdicts, facts and edges name it", r.ID != ""},
				{"kind", "one of " + strings.Join(kindNames(), ", "), r.Kind != ""},
				{"level", `"fail" or "review"`, r.Level != ""},
			} {
				if !p.set(at+"."+k.key, k.set) {
					p.add(at+"."+k.key, "missing; %s", k.why)
					missing = true
				}
			}
			if missing {
				continue
			}
			if j, dup := ids[r.ID]; dup && r.ID != "" {
				p.add(fmt.Sprintf("%s.rules[%d].id", base, i), "%q is already the id of rules[%d]; each rule needs its own id", r.ID, j)
				continue
			}
			ids[r.ID] = i
			alone := r
			alone.Attacks, alone.Supersedes = nil, nil
			if _, err := gates.LoadCatalog([]gates.RuleSpec{alone}); err != nil {
				p.add(fmt.Sprintf("%s.rules[%d]", base, i), "%s", gateMsg(err))
			}
		}
		for i, r := range rules {
			for _, e := range []struct {
				key string
				to  []string
			}{{"attacks", r.Attacks}, {"supersedes", r.Supersedes}} {
				for _, to := range e.to {
					key := fmt.Sprintf("%s.rules[%d].%s", base, i, e.key)
					switch _, ok := ids[to]; {
					case to == r.ID:
						p.add(key, "rule %q names itself", r.ID)
					case !ok:
						p.add(key, "%q is not a rule of this profile (rules: %s)", to, strings.Join(slices.Sorted(maps.Keys(ids)), ", "))
					}
				}
			}
		}
		if len(p.errs) > before {
			continue
		}
		if _, err := gates.LoadCatalog(rules); err != nil {
			p.add(base+".rules", "%s", gateMsg(err))
		}
	}
	if !c.HasGate(c.Defaults.Gate) {
		p.add("defaults.gate", "%q is not a gate profile (%s)", c.Defaults.Gate, strings.Join(c.GateNames(), ", "))
	}
}

// gateMsg is a gates load error without its package prefix (the key says
// where it is).
func gateMsg(err error) string {
	msg := strings.TrimPrefix(err.Error(), "gates: load catalog: ")
	return strings.TrimPrefix(msg, "gates: ")
}

func kindNames() []string {
	var names []string
	for _, k := range gates.Kinds() {
		names = append(names, k.Name)
	}
	return names
}
