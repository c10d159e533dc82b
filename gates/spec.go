package gates

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// RuleSpec declares one rule of a catalog in configuration (TOML or JSON),
// for example:
//
//	[[gate.rules]]
//	id = "quotes"
//	kind = "citation-quote"
//	level = "fail"
//
//	[[gate.rules]]
//	id = "no-todo"
//	kind = "regex"
//	level = "fail"
//	params = { field = "evidence", pattern = "(?i)\\bTODO\\b", mode = "must_not_match" }
//	supersedes = ["evidence-length"]
//
// Kind names a built-in kind ([Kinds]; `questbox rules` lists them with
// their parameters).
// Attacks and Supersedes name other rules of the same catalog (see
// [NewGraphCatalog]); Weight is the rule's weight in the defeat graph, in
// (0, 1], and 0 means 1.
type RuleSpec struct {
	// ID names the rule in its catalog: verdicts cite it, edges name it.
	ID string `json:"id" toml:"id"`
	// Kind is the built-in rule kind the rule is one of.
	Kind string `json:"kind" toml:"kind"`
	// Level is what a rule that fires makes of the verdict: "fail" or
	// "review".
	Level string `json:"level" toml:"level"`
	// Params are the kind's parameters, by name.
	Params map[string]any `json:"params,omitempty" toml:"params"`
	// Attacks are the ids of rules this one weakens when both fire.
	Attacks []string `json:"attacks,omitempty" toml:"attacks"`
	// Supersedes are the ids of rules this one is reported as the root
	// cause over when both survive; it never changes the verdict.
	Supersedes []string `json:"supersedes,omitempty" toml:"supersedes"`
	// Weight is the rule's weight in the defeat graph, in (0, 1]; 0
	// means 1.
	Weight float64 `json:"weight,omitempty" toml:"weight"`
}

// LoadCatalog builds a catalog from specs, in order. It fails closed: no
// specs ([ErrEmptyCatalog]), an empty or duplicate id ([ErrInvalidRule],
// [ErrDuplicateRule]), an unknown or missing level ([ErrInvalidLevel]), an
// unknown kind ([ErrUnknownKind]), an unknown, missing or ill-typed parameter
// or a bad value ([ErrInvalidConfig]), and an edge naming an unknown rule, a
// self edge, a supersedes cycle, a ground rule attacking a pure rule or a
// bad weight ([ErrInvalidGraph]) are each an error naming the rule and the
// problem. Only the first problem is reported.
//
// Every loaded catalog is decided by the defeat graph; with no edges that is
// exactly level aggregation.
func LoadCatalog(specs []RuleSpec) (*Catalog, error) {
	if len(specs) == 0 {
		return nil, fmt.Errorf("gates: load catalog: %w", ErrEmptyCatalog)
	}
	rules := make([]Rule, 0, len(specs))
	seen := map[string]int{}
	for i, s := range specs {
		if s.ID == "" || strings.TrimSpace(s.ID) != s.ID {
			return nil, fmt.Errorf("gates: load catalog: rule #%d has id %q: %w", i, s.ID, ErrInvalidRule)
		}
		if j, dup := seen[s.ID]; dup {
			return nil, fmt.Errorf("gates: load catalog: rule %q at #%d and #%d: %w", s.ID, j, i, ErrDuplicateRule)
		}
		seen[s.ID] = i
		level, err := ParseLevel(s.Level)
		if err != nil {
			return nil, fmt.Errorf("gates: load catalog: rule %q: %w", s.ID, err)
		}
		k, ok := kindByName(s.Kind)
		if !ok {
			return nil, fmt.Errorf("gates: load catalog: rule %q: kind %q (known: %s): %w", s.ID, s.Kind, strings.Join(kindNames(), ", "), ErrUnknownKind)
		}
		p := &params{m: s.Params, used: map[string]bool{}}
		r, err := k.build(p)
		if err == nil {
			err = p.finish()
		}
		if err != nil {
			return nil, fmt.Errorf("gates: load catalog: rule %q (%s): %w", s.ID, s.Kind, err)
		}
		rules = append(rules, specRule{inner: r, id: s.ID, level: level, kind: k.Name})
	}
	c, err := NewCatalog(rules...)
	if err != nil {
		return nil, err
	}
	for i := range c.entries {
		c.entries[i].kind = specs[i].Kind
	}
	var edges []Edge
	weights := map[string]float64{}
	for _, s := range specs {
		for _, to := range s.Attacks {
			edges = append(edges, Edge{From: s.ID, Kind: Attacks, To: to})
		}
		for _, to := range s.Supersedes {
			edges = append(edges, Edge{From: s.ID, Kind: Supersedes, To: to})
		}
		if s.Weight != 0 {
			weights[s.ID] = s.Weight
		}
	}
	if err := c.setGraph(edges, weights); err != nil {
		return nil, fmt.Errorf("gates: load catalog: %w", err)
	}
	return c, nil
}

// specRule gives a built-in rule the id and level its spec declared.
type specRule struct {
	inner Rule
	id    string
	level Level
	kind  string
}

func (r specRule) ID() string            { return r.id }
func (r specRule) Level() Level          { return r.level }
func (r specRule) Stage() Stage          { return r.inner.Stage() }
func (r specRule) Description() string   { return r.inner.Description() }
func (r specRule) Check(in Input) []Fact { return r.inner.Check(in) }

// Needs implements [GroundRule] when the inner rule does.
func (r specRule) Needs(in Input) []Request {
	if g, ok := r.inner.(GroundRule); ok {
		return g.Needs(in)
	}
	return nil
}

func (r specRule) silentWithoutContract() bool {
	b, ok := r.inner.(contractBound)
	return ok && b.silentWithoutContract()
}

// Validate implements [Validator] when the inner rule does.
func (r specRule) Validate() error {
	if v, ok := r.inner.(Validator); ok {
		return v.Validate()
	}
	return nil
}

// params reads a spec's parameters strictly: every one must be consumed.
type params struct {
	m    map[string]any
	used map[string]bool
}

func (p *params) get(name string) (any, bool) {
	p.used[name] = true
	v, ok := p.m[name]
	return v, ok
}

func (p *params) finish() error {
	var unknown []string
	for k := range p.m {
		if !p.used[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("unknown parameter(s) %s: %w", strings.Join(unknown, ", "), ErrInvalidConfig)
	}
	return nil
}

func (p *params) str(name string, required bool, def string) (string, error) {
	v, ok := p.get(name)
	if !ok {
		if required {
			return "", fmt.Errorf("parameter %s is required: %w", name, ErrInvalidConfig)
		}
		return def, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("parameter %s: got %T, want a string: %w", name, v, ErrInvalidConfig)
	}
	return s, nil
}

// integer accepts int kinds (TOML) and integral float64 (JSON).
func (p *params) integer(name string, required bool, def int64) (int64, error) {
	v, ok := p.get(name)
	if !ok {
		if required {
			return 0, fmt.Errorf("parameter %s is required: %w", name, ErrInvalidConfig)
		}
		return def, nil
	}
	switch n := v.(type) {
	case int:
		return int64(n), nil
	case int64:
		return n, nil
	case int32:
		return int64(n), nil
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int64(n), nil
		}
	}
	return 0, fmt.Errorf("parameter %s: got %v, want an integer: %w", name, v, ErrInvalidConfig)
}

func (p *params) boolean(name string, def bool) (bool, error) {
	v, ok := p.get(name)
	if !ok {
		return def, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("parameter %s: got %T, want true or false: %w", name, v, ErrInvalidConfig)
	}
	return b, nil
}

func (p *params) strs(name string, required bool) ([]string, error) {
	v, ok := p.get(name)
	if !ok {
		if required {
			return nil, fmt.Errorf("parameter %s is required: %w", name, ErrInvalidConfig)
		}
		return nil, nil
	}
	var out []string
	switch l := v.(type) {
	case []string:
		out = slices.Clone(l)
	case []any:
		for i, e := range l {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("parameter %s[%d]: got %T, want a string: %w", name, i, e, ErrInvalidConfig)
			}
			out = append(out, s)
		}
	default:
		return nil, fmt.Errorf("parameter %s: got %T, want a list of strings: %w", name, v, ErrInvalidConfig)
	}
	return out, nil
}

func (p *params) oneOf(name string, required bool, def string, allowed ...string) (string, error) {
	s, err := p.str(name, required, def)
	if err != nil {
		return "", err
	}
	if !slices.Contains(allowed, s) {
		return "", fmt.Errorf("parameter %s is %q (want %s): %w", name, s, strings.Join(allowed, " | "), ErrInvalidConfig)
	}
	return s, nil
}

// millis parses a duration such as "500ms", "30s" or "2m" (gates reads no
// clock and does not import time, so this is its own small parser).
func (p *params) millis(name string, def int64) (int64, error) {
	s, err := p.str(name, false, "")
	if err != nil || s == "" {
		return def, err
	}
	unit := int64(0)
	num := s
	switch {
	case strings.HasSuffix(s, "ms"):
		unit, num = 1, strings.TrimSuffix(s, "ms")
	case strings.HasSuffix(s, "s"):
		unit, num = 1000, strings.TrimSuffix(s, "s")
	case strings.HasSuffix(s, "m"):
		unit, num = 60000, strings.TrimSuffix(s, "m")
	}
	n, perr := strconv.ParseInt(num, 10, 64)
	if unit == 0 || perr != nil || n <= 0 || n > 3600000/unit {
		return 0, fmt.Errorf("parameter %s is %q (want a duration such as 500ms, 30s or 2m, at most 60m): %w", name, s, ErrInvalidConfig)
	}
	return n * unit, nil
}
