package engine

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/prompttmpl"
)

// RoleOptions configure one role for every quest (the config's
// [roles.NAME], docs/design.md, "Roles"). The zero value changes nothing.
type RoleOptions struct {
	// Provider, when set, is the role's provider: NewQuest records it in
	// the new quest's RoleProviders (for a role the quest uses), so that a
	// later change of the configuration does not rewire a running quest.
	// `quest new --role-provider` overrides it per quest.
	Provider string
	// Prompt, when not nil, renders the prompt of the role's nodes instead
	// of the default one, with a [PromptData] (see [ParsePromptTemplate]).
	// It is read at each dispatch: a changed template applies to the next
	// prompt of every quest.
	Prompt *prompttmpl.Template
	// MaxTries, when positive, replaces the quest's max_tries for the
	// role's nodes.
	MaxTries int
	// EvidenceCap, for the owner, bounds the locked nodes' evidence its
	// prompt carries, in bytes; 0 means DefaultEvidenceCap.
	EvidenceCap int
}

// VendorLocal is the vendor of a provider on the box or the LAN: prompts
// to it are never redacted, and every quest allows it unless its egress
// says otherwise.
const VendorLocal = domain.VendorLocal

// Vendor is the vendor provider sends its prompts to (docs/design.md,
// "Privacy egress"): the one Options.Vendors names; else local for the
// built-in demo and external providers; else the provider's own name, so that
// a provider whose vendor nobody declared is a vendor of its own, never
// local.
func (e *Engine) Vendor(provider string) string { return vendorIn(e.conf(), provider) }

// vendorIn is Vendor by the options o.
func vendorIn(o *Options, provider string) string {
	if v := o.Vendors[provider]; v != "" {
		return v
	}
	if provider == ProviderDemo || provider == ProviderExternal {
		return VendorLocal
	}
	return provider
}

// network reports whether a run of q on provider may reach the network:
// only when the provider's vendor is not local and q's egress allows it.
// A command agent that may not runs with nothing but its own loopback
// (agent.Request.Network); a local LLM server is reached through an
// in-process provider (openai), not from inside a command agent.
func (e *Engine) network(q *Quest, provider string) bool {
	v := e.Vendor(provider)
	return v != VendorLocal && slices.Contains(q.Egress, v)
}

// memberRoles are the roles of councils and Teams: a quest may give them
// a provider whatever its own roles are.
var memberRoles = []string{RoleReviewer, RoleJudge, RolePlanner, RoleExecuter, RoleAccepter}

// checkRoleProviders says what is wrong with a spec's per-role providers:
// a role the quest cannot have, a provider that is not configured or
// cannot run.
func (e *Engine) checkRoleProviders(s *QuestSpec, add func(string, ...any)) {
	for _, role := range slices.Sorted(maps.Keys(s.RoleProviders)) {
		prov := s.RoleProviders[role]
		if !slices.Contains(s.Roles, role) && !slices.Contains(memberRoles, role) {
			add("role-provider %s=%s: role %q is not one of the quest's roles (%s) nor a council or Team role (%s)",
				role, prov, role, strings.Join(s.Roles, ","), strings.Join(memberRoles, ","))
			continue
		}
		if why := e.checkProvider(prov); why != "" {
			add("role-provider %s=%s: %s", role, prov, why)
		}
	}
}

// checkProvider says why a quest cannot use provider name, or "".
func (e *Engine) checkProvider(name string) string {
	if !e.HasProvider(name) {
		names := []string{ProviderExternal}
		for n := range e.conf().Providers {
			names = append(names, n)
		}
		slices.Sort(names)
		return fmt.Sprintf("provider %q is not configured (known: %s)", name, strings.Join(names, ", "))
	}
	if c, ok := e.conf().Providers[name].(ProviderChecker); ok {
		if err := c.Check(); err != nil {
			return fmt.Sprintf("provider %q cannot run: %v", name, err)
		}
	}
	return ""
}

// judgeTier is one tier of the L2 judge: its configuration key and its
// provider.
type judgeTier struct{ key, provider string }

// judgeTiers are the L2 judge's tiers, light then heavy; none without a
// judge. Each sends the material of the quests it judges (the claim and
// the cited sources) to its provider's vendor.
func (e *Engine) judgeTiers() []judgeTier {
	j := e.conf().Judge
	if j == nil {
		return nil
	}
	l, h := j.Fingerprints()
	return []judgeTier{{"judge.light", l.Provider}, {"judge.heavy", h.Provider}}
}

// String names the tier as refusals do: `the L2 judge's light tier
// (judge.light)`.
func (j judgeTier) String() string {
	return fmt.Sprintf("the L2 judge's %s tier (%s)", strings.TrimPrefix(j.key, "judge."), j.key)
}

// notAllowed says why q may not send its material to provider, or "": the
// provider's vendor is not one its egress allows. It is the one wording
// of the egress rule: creation (settleRoles), dispatch (egressStop) and
// judging (judgeL2) refuse with it.
func (e *Engine) notAllowed(q *Quest, provider string) string {
	v := e.Vendor(provider)
	if slices.Contains(q.Egress, v) {
		return ""
	}
	return fmt.Sprintf("provider %q is vendor %q, which the quest's egress (%s) does not allow", provider, v, strings.Join(q.Egress, ","))
}

// judgeNotAllowed says why q's material may not go to the L2 judge, or
// "": a tier whose vendor q's egress does not allow, named with it.
func (e *Engine) judgeNotAllowed(q *Quest) string {
	if len(q.Egress) == 0 {
		return "" // a quest stored before egress existed
	}
	for _, j := range e.judgeTiers() {
		if why := e.notAllowed(q, j.provider); why != "" {
			return j.String() + ": " + why
		}
	}
	return ""
}

// settleRoles fills a new quest's RoleProviders and Egress: the configured
// role providers (Options.Roles) of the roles it uses, overridden by the
// spec's; its egress the spec's, or its own provider's vendor and local.
// Then it refuses (ErrInvalid) a configured role provider that does not
// exist, and everything the quest would send its material to whose
// vendor its egress does not allow: its provider, its role providers, its
// council members' and the L2 judge's tiers, each named with its vendor.
func (e *Engine) settleRoles(q *Quest, s *QuestSpec) error {
	rp := map[string]string{}
	for role, ro := range e.conf().Roles {
		if ro.Provider != "" && q.UsesRole(role) {
			rp[role] = ro.Provider
		}
	}
	for role, prov := range s.RoleProviders {
		rp[role] = prov
	}
	q.RoleProviders = nil
	if len(rp) > 0 {
		q.RoleProviders = rp
	}
	q.Egress = slices.Clone(s.Egress)
	if len(q.Egress) == 0 {
		q.Egress = []string{e.Vendor(q.Provider)}
		if q.Egress[0] != VendorLocal {
			q.Egress = append(q.Egress, VendorLocal)
		}
	}
	var probs []string
	for _, role := range slices.Sorted(maps.Keys(rp)) {
		if _, set := s.RoleProviders[role]; set {
			continue // checked with the spec
		}
		if why := e.checkProvider(rp[role]); why != "" {
			probs = append(probs, fmt.Sprintf("role %s (from the configuration's [roles.%s]): %s", role, role, why))
		}
	}
	type use struct{ what, provider, instead string }
	const other = "choose another provider"
	uses := []use{{"the quest's provider", q.Provider, other}}
	for _, role := range slices.Sorted(maps.Keys(rp)) {
		uses = append(uses, use{"role " + role, rp[role], other})
	}
	for i, p := range q.CouncilReviewers {
		uses = append(uses, use{fmt.Sprintf("council reviewer %d", i+1), p, other})
	}
	for i, p := range q.CouncilJudges {
		uses = append(uses, use{fmt.Sprintf("council judge %d", i+1), p, other})
	}
	for _, j := range e.judgeTiers() {
		uses = append(uses, use{j.String(), j.provider, "give " + j.key + " another provider"})
	}
	for _, u := range uses {
		if why := e.notAllowed(q, u.provider); why != "" {
			probs = append(probs, fmt.Sprintf("%s: %s (allow it with --egress, declare the provider's vendor in its [providers.NAME] table, or %s)",
				u.what, why, u.instead))
		}
	}
	if len(probs) > 0 {
		return fmt.Errorf("quest: %s: %w", strings.Join(probs, "; "), ErrInvalid)
	}
	return nil
}

// maxTries is how many FAILs a node of role may take in q: the role's
// max_tries when configured (Options.Roles), else the quest's.
func (e *Engine) maxTries(q *Quest, role string) int { return maxTriesIn(e.conf(), q, role) }

// maxTriesIn is maxTries by the options o.
func maxTriesIn(o *Options, q *Quest, role string) int {
	if m := o.Roles[role].MaxTries; m > 0 {
		return m
	}
	return q.Limits.MaxTries
}
