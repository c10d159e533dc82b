package api

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine"
)

// POST /api/quests takes role_providers and egress; a provider that does
// not exist or whose vendor the egress does not allow is a 400 naming it.
func TestNewQuestRoleProvidersAndEgress(t *testing.T) {
	hc, stop := InProcess(New(Options{Engines: newEngines(t), Internal: true}))
	defer stop()
	c := NewClient(hc, "test")
	ctx := context.Background()
	external := engine.ProviderExternal
	for _, tc := range []struct {
		name string
		req  NewQuest
		want string
	}{
		{"unknown provider", NewQuest{RoleProviders: map[string]string{"owner": "nope"}}, `role-provider owner=nope: provider "nope" is not configured`},
		{"vendor not allowed", NewQuest{Egress: []string{"anthropic"}}, `the quest's provider: provider "external" is vendor "local", which the quest's egress (anthropic) does not allow`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := tc.req
			req.Name, req.Direction, req.Provider = "q", "find the best free OCR", &external
			_, err := c.NewQuest(ctx, req)
			ae, ok := errors.AsType[*Error](err)
			if !ok || HTTPStatus(ae.Code) != http.StatusBadRequest || !strings.Contains(ae.Message, tc.want) {
				t.Fatalf("got %v, want 400 saying %q", err, tc.want)
			}
		})
	}
	if _, err := c.NewQuest(ctx, NewQuest{Name: "q", Direction: "find the best free OCR", Provider: &external,
		RoleProviders: map[string]string{"owner": external}, Egress: []string{"local"}}); err != nil {
		t.Fatal(err)
	}
}
