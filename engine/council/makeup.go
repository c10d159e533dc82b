package council

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/questbox/questbox/engine/domain"
)

// Config names the providers of council members (the config's
// [council]): see Providers.
type Config struct {
	Reviewers []string
	Judges    []string
}

// MaxMembers bounds each kind of member of a council.
const MaxMembers = 9

// Providers assigns providers to a council of r reviewers and j judges:
// member i of a kind takes the i-th provider of its list (reviewers,
// judges), cycling; an empty list gives every member of that kind
// fallback (the quest's provider).
func Providers(r, j int, reviewers, judges []string, fallback string) (rs, js []string) {
	pick := func(n int, list []string) []string {
		out := make([]string, 0, n)
		for i := range n {
			if len(list) == 0 {
				out = append(out, fallback)
			} else {
				out = append(out, list[i%len(list)])
			}
		}
		return out
	}
	return pick(r, reviewers), pick(j, judges)
}

// Check says what is wrong with the council of s (its mode, roles,
// members' providers and phase gates), if anything, through
// add; hasProvider reports whether a provider is configured.
func Check(s *domain.QuestSpec, hasProvider func(name string) bool, add func(format string, args ...any)) {
	if len(s.CouncilReviewers)+len(s.CouncilJudges) == 0 {
		if len(s.PhaseGates) > 0 {
			add("phase gates (%s) need a council", strings.Join(s.PhaseGates, ","))
		}
		return
	}
	if s.Mode == domain.ModeSolo {
		add("a council decides the owner's turns, and mode solo has no owner: use mode team")
	}
	if len(s.CouncilReviewers) > MaxMembers || len(s.CouncilJudges) > MaxMembers {
		add("a council has at most %d reviewers and %d judges", MaxMembers, MaxMembers)
	}
	seen := map[string]bool{}
	for _, p := range slices.Concat(s.CouncilReviewers, s.CouncilJudges) {
		if seen[p] {
			continue
		}
		seen[p] = true
		switch {
		case MemberAllowed(p) != "":
			add("council provider %q: %s", p, MemberAllowed(p))
		case !hasProvider(p):
			add("council provider %q is not configured", p)
		}
	}
	for _, g := range s.PhaseGates {
		if !slices.Contains(s.Roles, g) || g == domain.RoleOwner {
			add("phase gate %q is not a worker role of the quest (%s)", g, strings.Join(s.Roles, ","))
		}
	}
}

// Parse reads a council's make-up, "reviewer:R,judge:J" (either part may
// be left out, in any order; "" is no council).
func Parse(s string) (reviewers, judges int, err error) {
	seen := map[string]bool{}
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		kind, num, ok := strings.Cut(part, ":")
		n, cerr := strconv.Atoi(strings.TrimSpace(num))
		kind = strings.TrimSpace(kind)
		switch {
		case !ok || cerr != nil || n < 0 || n > MaxMembers:
			return 0, 0, fmt.Errorf("council %q: %q is not KIND:N with N from 0 to %d (e.g. reviewer:2,judge:1): %w", s, part, MaxMembers, domain.ErrInvalid)
		case kind != domain.RoleReviewer && kind != domain.RoleJudge:
			return 0, 0, fmt.Errorf("council %q: %q is not reviewer or judge: %w", s, kind, domain.ErrInvalid)
		case seen[kind]:
			return 0, 0, fmt.Errorf("council %q: %s is given twice: %w", s, kind, domain.ErrInvalid)
		}
		seen[kind] = true
		if kind == domain.RoleReviewer {
			reviewers = n
		} else {
			judges = n
		}
	}
	return reviewers, judges, nil
}
