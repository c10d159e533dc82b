package engine

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/gates"
)

// ProviderChecker is an optional interface of a [Provider]: Check reports
// why the provider cannot run at all right now (a command provider whose
// executable is missing, for example), or nil. [Engine.NewQuest] calls it
// and refuses the quest with its message; it must be quick and may be
// called concurrently with Run. *agent.Command implements it.
type ProviderChecker interface {
	Check() error
}

var vendorRE = regexp.MustCompile(`^[a-z0-9_-]+$`)

// DefaultGate is the gate profile of a quest that names none, and the only
// one the default Options.Catalog serves (gates.DefaultCatalog).
const DefaultGate = "default"

// checkGate says why a new quest cannot use the gate profile of s, or "".
// With Options.GateNames the profile must be one of them; without, the
// profile must have a catalog (Options.Catalog, asked with the quest as it
// would be stored, before it has an id).
func (e *Engine) checkGate(s *QuestSpec) string {
	o := e.conf()
	if o.GateNames == nil {
		q := &Quest{Name: s.Name, Direction: s.Direction, Mode: s.Mode, Roles: s.Roles, Provider: s.Provider,
			Gate: s.Gate, Checkpoints: s.Checkpoints, Limits: s.Limits}
		if _, err := o.Catalog(q); err != nil {
			return fmt.Sprintf("gate profile %q: %v", s.Gate, err)
		}
		return ""
	}
	names := slices.Clone(o.GateNames())
	slices.Sort(names)
	if !slices.Contains(names, s.Gate) {
		return fmt.Sprintf("gate profile %q is not configured (known: %s)", s.Gate, strings.Join(names, ", "))
	}
	return ""
}

// builtinCatalog is the default Options.Catalog: the built-in profile only.
func builtinCatalog(q *Quest) (*gates.Catalog, error) {
	if q != nil && q.Gate != "" && q.Gate != DefaultGate {
		return nil, fmt.Errorf("gate profile %q is not configured (known: %s)", q.Gate, DefaultGate)
	}
	return gates.DefaultCatalog(), nil
}

// validateSpec checks everything about a new quest at once: its text, its
// mode and roles (CheckRoles), its checkpoints, its gate profile, its
// provider (configured, and runnable if it can tell) and its limits. The
// error lists every problem and wraps ErrInvalid.
func (e *Engine) validateSpec(s *QuestSpec) error {
	var probs []string
	add := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	s.Name = strings.TrimSpace(s.Name)
	s.Direction = strings.TrimSpace(s.Direction)
	if s.Gate == "" {
		s.Gate = DefaultGate
	}
	if s.Name == "" {
		add("name is empty")
	}
	if s.Direction == "" {
		add("direction is empty")
	}

	domain.CheckSpecRoles(s, add)

	probs = append(probs, checkTeams(s)...)
	if why := e.checkGate(s); why != "" {
		add("%s", why)
	}
	if s.Project != "" {
		if why := CheckProject(s.Project); why != "" {
			add("%s", why)
		}
	}

	if why := e.checkProvider(s.Provider); why != "" {
		add("%s", why)
	}

	e.checkRoleProviders(s, add)
	for _, v := range s.Egress {
		if !vendorRE.MatchString(v) {
			add("egress vendor %q is not a lower-case name (letters, digits, _ or -)", v)
		}
	}

	e.checkCouncil(s, add)

	domain.CheckLimits(s.Limits, add)
	if len(probs) > 0 {
		return fmt.Errorf("quest: %s: %w", strings.Join(probs, "; "), ErrInvalid)
	}
	return nil
}
