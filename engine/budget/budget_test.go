package budget

import (
	"testing"
	"time"

	"github.com/questbox/questbox/engine/domain"
)

func TestReservation(t *testing.T) {
	caps := map[string]int{"capped": 1000, "zero": 0}
	for _, c := range []struct {
		name, provider string
		want           int
	}{
		{"capped", "capped", PromptTokens + 1000},
		{"cap of zero", "zero", RunTokens},
		{"no cap", "other", RunTokens},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Reservation(caps, c.provider); got != c.want {
				t.Errorf("got %d, want %d", got, c.want)
			}
		})
	}
}

func TestAdmit(t *testing.T) {
	n := &domain.Node{ID: "n2", Role: domain.RolePOC}
	for _, c := range []struct {
		name    string
		q       domain.Quest
		reserve int
		want    string
	}{
		{"fits", domain.Quest{Limits: domain.Limits{MaxAgentRuns: 2, TokenBudget: 5000}, Counters: domain.Counters{AgentRuns: 1, Tokens: 1000}}, 4000, ""},
		{"runs", domain.Quest{Limits: domain.Limits{MaxAgentRuns: 1, TokenBudget: 5000}, Counters: domain.Counters{AgentRuns: 1}}, 10,
			"max_agent_runs 1: 1 used, a run of n2 (poc) on p needs 1"},
		{"tokens, with runs in flight", domain.Quest{Limits: domain.Limits{MaxAgentRuns: 5, TokenBudget: 5000}, Counters: domain.Counters{Tokens: 1000}, ReservedTokens: 2000}, 2001,
			"token_budget 5000: 1000 used and 2000 reserved by runs in flight, a run of n2 (poc) on p reserves 2001"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Admit(&c.q, n, "p", c.reserve); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestReached(t *testing.T) {
	l := domain.Limits{MaxAgentRuns: 3, WallClock: time.Hour, TokenBudget: 100}
	for _, c := range []struct {
		name string
		c    domain.Counters
		want string
	}{
		{"none", domain.Counters{AgentRuns: 2, WallUsed: time.Minute, Tokens: 99}, ""},
		{"runs first", domain.Counters{AgentRuns: 3, WallUsed: time.Hour, Tokens: 100}, "max_agent_runs reached (3 of 3)"},
		{"wall clock", domain.Counters{WallUsed: time.Hour + 1500*time.Millisecond, Tokens: 100}, "wall_clock budget used (1h0m2s of 1h0m0s)"},
		{"tokens", domain.Counters{Tokens: 120}, "token_budget used (120 of 100)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Reached(l, c.c); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// A session counts an active quest's time from its own mark when the
// mark is the session's, else from the session's start; a stopped quest,
// or no session, counts what is stored.
func TestSessionCountsActiveTime(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := NewSession(start)
	if s.ID() == 0 {
		t.Fatal("session id 0, which means no session")
	}
	snow := s.At(start.Add(90 * time.Minute))
	if !snow.Equal(start.Add(90 * time.Minute)) {
		t.Fatalf("session time %v, want %v", snow, start.Add(90*time.Minute))
	}
	stored := domain.Counters{WallUsed: 10 * time.Minute}
	for _, c := range []struct {
		name string
		s    *Session
		q    domain.Quest
		want time.Duration
	}{
		{"marked by this session", s, domain.Quest{Status: domain.QuestActive, Counters: stored, WallSession: s.ID(), WallMark: start.Add(time.Hour)}, 40 * time.Minute},
		{"marked by another", s, domain.Quest{Status: domain.QuestActive, Counters: stored, WallSession: s.ID() + 1, WallMark: start.Add(time.Hour)}, 100 * time.Minute},
		{"stopped", s, domain.Quest{Status: domain.QuestStopped, Counters: stored}, 10 * time.Minute},
		{"no session", nil, domain.Quest{Status: domain.QuestActive, Counters: stored}, 10 * time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.s.Used(&c.q, snow); got != c.want {
				t.Errorf("used %v, want %v", got, c.want)
			}
			if got := c.s.Unsaved(&c.q, snow); got != c.want-stored.WallUsed {
				t.Errorf("unsaved %v, want %v", got, c.want-stored.WallUsed)
			}
		})
	}
}
