package team

import (
	"testing"

	"github.com/questbox/questbox/engine/domain"
)

func TestTeamMovesAreTeamsOnly(t *testing.T) {
	worker, team := &domain.Node{Role: domain.RoleScout}, &domain.Node{Role: domain.RoleScout, TeamKind: domain.RoleScout}
	tests := []struct {
		name string
		n    *domain.Node
		to   domain.Status
		want bool
	}{
		{"a worker never revises", worker, domain.Revising, false},
		{"a worker is never team_blocked", worker, domain.TeamBlocked, false},
		{"a worker runs", worker, domain.Running, true},
		{"a Team revises", team, domain.Revising, true},
		{"a Team is blocked", team, domain.TeamBlocked, true},
		{"a Team is never dispatched", team, domain.Running, false},
		{"a Team passes", team, domain.Passed, true},
	}
	for _, tt := range tests {
		if got := MoveOK(tt.n, tt.to); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
	if domain.TeamBlocked.CanMove(domain.Pending) || domain.TeamBlocked.CanMove(domain.Aborted) {
		t.Errorf("team_blocked is terminal: got a move out of it")
	}
}
