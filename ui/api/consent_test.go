package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/gates/consent"
)

// awaiting makes a quest whose node n1 awaits consent and returns its
// claim hash.
func awaiting(t *testing.T, eng *engine.Engine, hyps ...string) string {
	t.Helper()
	s := eng.NewQuestSpec("cp", "check with a human")
	s.Provider, s.Checkpoints = engine.ProviderExternal, []string{"scout"}
	q, err := eng.NewQuest(s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Scan(q.ID, hyps); err != nil {
		t.Fatal(err)
	}
	ans, _ := json.Marshal(map[string]any{"verdict": "promising", "evidence": "alpha works on all twenty sample invoices.",
		"citations": []any{}, "new_directions": []string{}})
	res, err := eng.Submit(context.Background(), q.ID, "n1", []byte("```json\n"+string(ans)+"\n```\n"))
	if err != nil || res.Status != engine.AwaitingConsent {
		t.Fatalf("submit: %+v, %v; want awaiting_consent", res, err)
	}
	return res.ClaimHash
}

func TestConsentDecisions(t *testing.T) {
	e := newEngines(t)
	claim := awaiting(t, e.eng, "alpha first")
	ctx := context.Background()
	apiErr := func(err error) string {
		if ae, ok := errors.AsType[*Error](err); ok {
			return ae.Code
		}
		return fmt.Sprint(err)
	}

	// The control socket and the in-process door cannot consent.
	socket, stop := InProcess(New(Options{Engines: e, Internal: true}))
	defer stop()
	if _, err := NewClient(socket, "socket").Approve(ctx, "n1", claim); apiErr(err) != CodeForbidden {
		t.Errorf("approve without a consent source: %v, want forbidden", err)
	}

	// A dashboard whose owner did not enable consent cannot either.
	disabled, stop2 := InProcess(New(Options{Engines: e, Consent: func(*http.Request) (consent.Source, error) {
		return consent.NewDashboard(false, "owner")
	}}))
	defer stop2()
	if _, err := NewClient(disabled, "dashboard").Approve(ctx, "n1", claim); apiErr(err) != CodeForbidden || !strings.Contains(err.Error(), "not enabled") {
		t.Errorf("approve with dashboard consent off: %v, want forbidden", err)
	}

	hc, stop3 := InProcess(New(Options{Engines: e, Consent: func(*http.Request) (consent.Source, error) {
		return consent.NewDashboard(true, "owner")
	}}))
	defer stop3()
	c := NewClient(hc, "dashboard")
	for _, tc := range []struct {
		name, node, hash, code string
	}{
		{"malformed hash", "n1", "abc", CodeInvalid},
		{"another claim", "n1", strings.Repeat("0", 64), CodeConflict},
		{"no such node", "n9", claim, CodeNotFound},
	} {
		if _, err := c.Approve(ctx, tc.node, tc.hash); apiErr(err) != tc.code {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}
	n, err := c.Approve(ctx, "n1", claim)
	if err != nil {
		t.Fatal(err)
	}
	if n.Status != NodeGrowing && n.Status != NodeExplored {
		t.Errorf("approved n1 is %s", n.Status)
	}
	if a := n.Attempts[len(n.Attempts)-1]; a.Outcome != "granted" || a.Feedback != "consent by dashboard:owner" {
		t.Errorf("last attempt %+v, want granted by dashboard:owner", a)
	}
	if _, err := c.Reject(ctx, "n1", claim); apiErr(err) != CodeConflict {
		t.Errorf("reject after approval: %v, want conflict", err)
	}
}
