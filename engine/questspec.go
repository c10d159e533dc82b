package engine

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

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

// DefaultGate is the gate profile of a quest that names none, and the only
// one the default Options.Catalog serves (gates.DefaultCatalog).
const DefaultGate = "default"

var (
	roleRE   = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)
	vendorRE = regexp.MustCompile(`^[a-z0-9_-]+$`)
)

// CheckRoleName reports why r cannot name a role, or nil: a role is a
// lower-case letter followed by letters, digits, _ or -, because it ends up
// in MQTT topics, URLs and file names. The configuration's defaults and
// NewQuest share it, so no default can name a role every quest refuses.
func CheckRoleName(r string) error {
	if !roleRE.MatchString(r) {
		return fmt.Errorf("role %q is not a lower-case name (a letter, then letters, digits, _ or -)", r)
	}
	return nil
}

// CheckRoles reports why a quest of mode with roles could never make
// progress, or nil. It is the one place that rule lives: NewQuest applies
// it to every spec, and the configuration applies it to its defaults.
//
// What each mode dispatches (docs/design.md, "Solo and team modes") decides
// what it needs:
//   - team: the workers' new directions become proposals that only an owner
//     node promotes, so the roles must include owner, and at least one
//     other role to do the work the owner hands out;
//   - solo: no owner is ever dispatched, so at least one role other than
//     owner (scout, poc, strategist or a role of the quest's own).
//
// Any role other than owner is a worker: it answers with the worker output
// contract. The error is a sentence for a person, naming the mode and the
// roles; NewQuest wraps it in [ErrInvalid].
func CheckRoles(mode string, roles []string) error {
	if mode != ModeTeam && mode != ModeSolo {
		return fmt.Errorf("mode %q is not one of team, solo", mode)
	}
	if len(roles) == 0 {
		return errors.New("roles is empty: a quest needs at least one role")
	}
	owner := slices.Contains(roles, RoleOwner)
	worker := slices.ContainsFunc(roles, func(r string) bool { return r != RoleOwner })
	list := strings.Join(roles, ",")
	switch {
	case mode == ModeTeam && !owner:
		return fmt.Errorf("mode team needs the owner role: only the owner promotes the workers' proposals, so nothing would run after the first node (roles: %s); add owner, or use mode solo", list)
	case mode == ModeTeam && !worker:
		return fmt.Errorf("mode team needs a role that can work besides owner (e.g. scout or poc): the owner decides, it never does the work (roles: %s)", list)
	case !worker:
		return fmt.Errorf("mode solo needs a role that can work (e.g. scout or poc): owner is only dispatched in team mode (roles: %s)", list)
	}
	return nil
}

// workerRole is the role of the nodes a quest's workers grow or propose
// (and that Scan seeds when the quest has no scout): poc if the quest has
// it, else its first role other than owner. Only a quest stored before
// CheckRoles existed can lack one; it gets its first role.
func workerRole(roles []string) string {
	if slices.Contains(roles, RolePOC) {
		return RolePOC
	}
	for _, r := range roles {
		if r != RoleOwner {
			return r
		}
	}
	return roles[0]
}

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

	checkSpecRoles(s, add)

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

	checkLimits(s.Limits, add)
	if len(probs) > 0 {
		return fmt.Errorf("quest: %s: %w", strings.Join(probs, "; "), ErrInvalid)
	}
	return nil
}

// checkSpecRoles adds the problems of the spec's roles (names, repeats,
// the phase gates' suffix, what the mode needs) and of its checkpoints,
// each of which must be a role or a phase gate, named once.
func checkSpecRoles(s *QuestSpec, add func(string, ...any)) {
	seen := map[string]bool{}
	for _, r := range s.Roles {
		switch {
		case CheckRoleName(r) != nil:
			add("%v", CheckRoleName(r))
		case seen[r]:
			add("role %q is listed twice", r)
		case isGateRole(r):
			add("role %q ends in %q, which names phase gates (--gates)", r, gateSuffix)
		case r == RoleEgress:
			add("role %q is the egress consent's; name the role otherwise", r)
		}
		seen[r] = true
	}
	if err := CheckRoles(s.Mode, s.Roles); err != nil {
		add("%v", err)
	}
	checked := map[string]bool{}
	for _, c := range s.Checkpoints {
		switch {
		case !seen[c] && !(isGateRole(c) && slices.Contains(s.PhaseGates, strings.TrimSuffix(c, gateSuffix))):
			add("checkpoint %q is not one of the quest's roles (%s) or phase gates", c, strings.Join(s.Roles, ","))
		case checked[c]:
			add("checkpoint %q is listed twice", c)
		}
		checked[c] = true
	}
}

// checkLimits adds the problems of the spec's limits: at least one try,
// no negative budget.
func checkLimits(l Limits, add func(string, ...any)) {
	if l.MaxTries < 1 {
		add("max_tries %d must be at least 1", l.MaxTries)
	}
	if l.MaxAgentRuns < 0 || l.TokenBudget < 0 || l.WallClock < 0 || l.MaxStalled < 0 || l.OwnerEvery < 0 {
		add("budgets must not be negative")
	}
}
