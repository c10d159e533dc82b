package domain

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// QuestSpec describes a new quest. Start from Engine.NewQuestSpec to get
// the configured defaults.
type QuestSpec struct {
	Name        string
	Direction   string
	Mode        string
	Roles       []string
	Provider    string
	Gate        string
	Checkpoints []string
	Limits      Limits
	// Project is the directory the quest's command agents run in; ""
	// keeps the provider's. It must be an absolute path to a directory
	// the daemon can read, write and enter (engine.CheckProject).
	Project string
	// CouncilReviewers and CouncilJudges name the provider of each member
	// of the quest's council, one entry per member (see
	// council.Providers); both empty: no council, the owner decides alone
	// (v2). PhaseGates are the roles whose phase a council gate closes.
	CouncilReviewers []string
	CouncilJudges    []string
	PhaseGates       []string
	// RoleProviders names, per role, the provider of that role's nodes
	// (`quest new --role-provider ROLE=PROVIDER`), over the configured
	// ones (the engine's Options.Roles). A role must be one of Roles or a council or
	// Team role, the provider a configured one.
	RoleProviders map[string]string
	// Egress lists the vendors the quest may send its material to
	// (`quest new --egress`); empty means its provider's vendor and
	// local (docs/design.md, "Privacy egress").
	Egress []string
	// Teams (v3.2): see docs/design.md, "Councils and Teams". MaxRevisions 0 means
	// DefaultMaxRevisions, AcceptMode "" means AcceptJudge; TeamAccept is
	// kept only when Teams is set.
	Teams        bool
	MaxRevisions int
	AcceptMode   string
	TeamAccept   map[string]string
}

// RoleEgress is the role of a quest's egress consent node. No quest may
// name it among its roles (CheckSpecRoles).
const RoleEgress = "egress"

var roleRE = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)

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

// WorkerRole is the role of the nodes a quest's workers grow or propose
// (and that Scan seeds when the quest has no scout): poc if the quest has
// it, else its first role other than owner. Only a quest stored before
// CheckRoles existed can lack one; it gets its first role.
func WorkerRole(roles []string) string {
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

// CheckSpecRoles adds the problems of the spec's roles (names, repeats,
// the phase gates' suffix, what the mode needs) and of its checkpoints,
// each of which must be a role or a phase gate, named once.
func CheckSpecRoles(s *QuestSpec, add func(string, ...any)) {
	seen := map[string]bool{}
	for _, r := range s.Roles {
		switch {
		case CheckRoleName(r) != nil:
			add("%v", CheckRoleName(r))
		case seen[r]:
			add("role %q is listed twice", r)
		case IsGateRole(r):
			add("role %q ends in %q, which names phase gates (--gates)", r, GateSuffix)
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
		case !seen[c] && !(IsGateRole(c) && slices.Contains(s.PhaseGates, strings.TrimSuffix(c, GateSuffix))):
			add("checkpoint %q is not one of the quest's roles (%s) or phase gates", c, strings.Join(s.Roles, ","))
		case checked[c]:
			add("checkpoint %q is listed twice", c)
		}
		checked[c] = true
	}
}

// CheckLimits adds the problems of the spec's limits: at least one try,
// no negative budget.
func CheckLimits(l Limits, add func(string, ...any)) {
	if l.MaxTries < 1 {
		add("max_tries %d must be at least 1", l.MaxTries)
	}
	if l.MaxAgentRuns < 0 || l.TokenBudget < 0 || l.WallClock < 0 || l.MaxStalled < 0 || l.OwnerEvery < 0 {
		add("budgets must not be negative")
	}
}
