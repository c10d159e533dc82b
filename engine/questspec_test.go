package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/gates"
)

// checked is a provider that says whether it can run.
type checked struct{ err error }

func (c checked) Run(context.Context, agent.Request) (agent.Reply, error) {
	return agent.Reply{}, c.err
}

func (c checked) Check() error { return c.err }

func TestCheckRoles(t *testing.T) {
	for _, tc := range []struct {
		name  string
		mode  string
		roles []string
		want  string // "" for nil, else a substring of the error
	}{
		{"team, default roles", ModeTeam, []string{RoleScout, RolePOC, RoleStrategist, RoleOwner}, ""},
		{"team, owner and one worker", ModeTeam, []string{RoleOwner, RoleScout}, ""},
		{"team, owner and a role of its own", ModeTeam, []string{"reviewer", RoleOwner}, ""},
		{"team without owner", ModeTeam, []string{RoleScout}, "mode team needs the owner role: "},
		{"team with only owner", ModeTeam, []string{RoleOwner}, "mode team needs a role that can work besides owner"},
		{"solo, one worker", ModeSolo, []string{RolePOC}, ""},
		{"solo, strategist only", ModeSolo, []string{RoleStrategist}, ""},
		{"solo with an unused owner", ModeSolo, []string{RoleOwner, RoleScout}, ""},
		{"solo with only owner", ModeSolo, []string{RoleOwner}, "mode solo needs a role that can work (e.g. scout or poc)"},
		{"no roles", ModeSolo, nil, "roles is empty"},
		{"unknown mode", "duo", []string{RoleScout}, `mode "duo" is not one of team, solo`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := domain.CheckRoles(tc.mode, tc.roles)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("got %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestWorkerRole(t *testing.T) {
	for _, tc := range []struct {
		roles []string
		want  string
	}{
		{[]string{RoleScout, RolePOC, RoleOwner}, RolePOC},
		{[]string{RoleOwner, RoleScout}, RoleScout},
		{[]string{RoleOwner, "reviewer", RoleStrategist}, "reviewer"},
		{[]string{RoleOwner}, RoleOwner}, // a quest stored before CheckRoles
	} {
		if got := domain.WorkerRole(tc.roles); got != tc.want {
			t.Errorf("domain.WorkerRole(%v): got %q, want %q", tc.roles, got, tc.want)
		}
	}
}

// TestNewQuestRefuses pins that every rule about a new quest lives in
// NewQuest: what it refuses, with which words, and that nothing is stored.
func TestNewQuestRefuses(t *testing.T) {
	missing := fmt.Errorf("command provider %q: %w: exec: \"no-such-agent\": executable file not found in $PATH", "ghost", agent.ErrNotFound)
	opt := Options{
		Providers: map[string]Provider{
			"ghost": checked{missing},
			"ready": checked{},
			"plain": funcProvider(nil),
		},
		GateNames: func() []string { return []string{"research", DefaultGate} },
	}
	for _, tc := range []struct {
		name string
		mod  func(*QuestSpec)
		want []string // substrings of the error; nil: accepted
	}{
		{"defaults", nil, nil},
		{"empty name and direction", func(s *QuestSpec) { s.Name, s.Direction = " ", "" },
			[]string{"name is empty", "direction is empty"}},
		{"bad mode", func(s *QuestSpec) { s.Mode = "duo" }, []string{`mode "duo" is not one of team, solo`}},
		{"team without owner", func(s *QuestSpec) { s.Mode, s.Roles = ModeTeam, []string{RoleScout} },
			[]string{"mode team needs the owner role: "}},
		{"team with only owner", func(s *QuestSpec) { s.Mode, s.Roles = ModeTeam, []string{RoleOwner} },
			[]string{"mode team needs a role that can work besides owner"}},
		{"solo with only owner", func(s *QuestSpec) { s.Mode, s.Roles = ModeSolo, []string{RoleOwner} },
			[]string{"mode solo needs a role that can work"}},
		{"solo without owner", func(s *QuestSpec) { s.Mode, s.Roles = ModeSolo, []string{RolePOC} }, nil},
		{"no roles", func(s *QuestSpec) { s.Roles = nil }, []string{"roles is empty"}},
		{"bad role name", func(s *QuestSpec) { s.Roles = []string{"Owner", RoleOwner, RoleScout} },
			[]string{`role "Owner" is not a lower-case name`}},
		{"role twice", func(s *QuestSpec) { s.Roles = []string{RoleScout, RoleOwner, RoleScout} },
			[]string{`role "scout" is listed twice`}},
		{"checkpoint not a role", func(s *QuestSpec) { s.Checkpoints = []string{"judge"} },
			[]string{`checkpoint "judge" is not one of the quest's roles`}},
		{"checkpoint twice", func(s *QuestSpec) { s.Checkpoints = []string{RoleScout, RoleScout} },
			[]string{`checkpoint "scout" is listed twice`}},
		{"configured gate", func(s *QuestSpec) { s.Gate = "research" }, nil},
		{"unknown gate", func(s *QuestSpec) { s.Gate = "strict" },
			[]string{`gate profile "strict" is not configured (known: default, research)`}},
		{"unknown provider", func(s *QuestSpec) { s.Provider = "nope" },
			[]string{`provider "nope" is not configured (known: external, ghost, plain, ready)`}},
		{"provider that cannot run", func(s *QuestSpec) { s.Provider = "ghost" },
			[]string{`provider "ghost" cannot run: command provider "ghost": agent executable not found: exec: "no-such-agent"`}},
		{"provider that can run", func(s *QuestSpec) { s.Provider = "ready" }, nil},
		{"provider that cannot tell", func(s *QuestSpec) { s.Provider = "plain" }, nil},
		{"zero max tries", func(s *QuestSpec) { s.Limits.MaxTries = 0 }, []string{"max_tries 0 must be at least 1"}},
		{"negative budget", func(s *QuestSpec) { s.Limits.TokenBudget = -1 }, []string{"budgets must not be negative"}},
		{"every problem at once", func(s *QuestSpec) {
			s.Direction, s.Roles, s.Gate, s.Provider = "", []string{RoleScout}, "strict", "ghost"
		}, []string{"direction is empty", "mode team needs the owner role", `gate profile "strict"`, `provider "ghost" cannot run`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, opt)
			s := h.e.NewQuestSpec("n", "d")
			s.Provider = ProviderExternal
			if tc.mod != nil {
				tc.mod(&s)
			}
			q, err := h.e.NewQuest(s)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("got %v, want the quest", err)
				}
				if q.Gate == "" {
					t.Errorf("quest has no gate profile")
				}
				return
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("got %v, want ErrInvalid", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("got %q, want it to contain %q", err, w)
				}
			}
			if qs, _ := h.e.Quests(); len(qs) != 0 {
				t.Errorf("a refused spec created %d quests", len(qs))
			}
		})
	}
}

// TestNewQuestGateWithoutNames pins what NewQuest does without
// Options.GateNames: it asks Catalog, the default one serving only the
// built-in profile.
func TestNewQuestGateWithoutNames(t *testing.T) {
	research := func(q *Quest) (*gates.Catalog, error) {
		if q.Gate != "research" && q.Gate != DefaultGate {
			return nil, fmt.Errorf("no profile %q here", q.Gate)
		}
		return gates.DefaultCatalog(), nil
	}
	for _, tc := range []struct {
		name    string
		catalog func(*Quest) (*gates.Catalog, error)
		gate    string
		want    string // "" accepted, else a substring of the error
	}{
		{"default catalog, no gate", nil, "", ""},
		{"default catalog, default gate", nil, DefaultGate, ""},
		{"default catalog, other gate", nil, "research", `gate profile "research": gate profile "research" is not configured (known: default)`},
		{"own catalog, its gate", research, "research", ""},
		{"own catalog, unknown gate", research, "strict", `gate profile "strict": no profile "strict" here`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{Catalog: tc.catalog})
			s := h.e.NewQuestSpec("n", "d")
			s.Provider, s.Gate = ProviderExternal, tc.gate
			q, err := h.e.NewQuest(s)
			if tc.want == "" {
				if err != nil || q.Gate == "" {
					t.Fatalf("got %v, %v, want a quest with a gate profile", q, err)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want ErrInvalid containing %q", err, tc.want)
			}
		})
	}
}

// TestOwnerFirstStillSeedsWorkers pins that the order of roles does not
// make owner a worker: Scan seeds, and workers propose, worker roles.
func TestOwnerFirstStillSeedsWorkers(t *testing.T) {
	p := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		return reply(answer("promising", "node "+req.Node+" looks promising indeed", "idea A")), nil
	})
	h := newHarness(t, Options{Providers: map[string]Provider{"p": p}})
	ext := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal; s.Roles = []string{RoleOwner, "reviewer"} })
	res, err := h.e.Scan(ext.ID, []string{"seed"})
	if err != nil || len(res.Added) != 1 {
		t.Fatalf("scan: %+v, %v", res, err)
	}
	if got := h.node(res.Added[0]).Role; got != "reviewer" {
		t.Errorf("scanned node role: got %q, want reviewer", got)
	}
	q := h.quest(func(s *QuestSpec) { s.Provider = "p"; s.Roles = []string{RoleOwner, "reviewer"} })
	h.tick()
	by := h.nodesByStatus(q.ID)
	if len(by[Proposed]) != 1 {
		t.Fatalf("want one proposal, got %v", by)
	}
	if got := h.node(by[Proposed][0]).Role; got != "reviewer" {
		t.Errorf("proposal role: got %q, want reviewer", got)
	}
}
