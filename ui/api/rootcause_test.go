package api

import (
	"context"
	"testing"

	"github.com/questbox/questbox/engine"
)

// TestVerdictEventCarriesRootCause: the verdict event names the rule at
// the root of a FAIL (README: <base>/event/verdict has "root_cause"), the
// same rule whose fact comes first.
func TestVerdictEventCarriesRootCause(t *testing.T) {
	e := newEngines(t)
	hc, stop := InProcess(New(Options{Engines: e, Internal: true}))
	defer stop()
	c := NewClient(hc, "test")
	ctx := context.Background()
	external := engine.ProviderExternal
	q, err := c.NewQuest(ctx, NewQuest{Name: "q", Direction: "find the best free OCR", Provider: &external})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Scan(ctx, q.ID, []string{"tesseract"}); err != nil {
		t.Fatal(err)
	}
	v, err := c.Submit(ctx, q.ID, "n1", []byte("no JSON at all"))
	if err != nil || v.Outcome != "FAIL" || len(v.Facts) == 0 {
		t.Fatalf("submit: %+v, %v; want a FAIL with facts", v, err)
	}
	evs, err := c.Events(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got *Event
	for i := range evs.Events {
		if evs.Events[i].Kind == engine.KindVerdict {
			got = &evs.Events[i]
		}
	}
	if got == nil {
		t.Fatalf("no verdict event in %+v", evs.Events)
	}
	if got.RootCause != "contract" || got.RootCause != v.Facts[0].Rule {
		t.Errorf("got root_cause %q, want %q (the first fact's rule)", got.RootCause, "contract")
	}
}
