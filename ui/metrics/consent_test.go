package metrics

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/internal/clock/clocktest"
	"github.com/questbox/questbox/ui/api"
)

// TestPendingConsentsLeaveOutExpiredOnes pins one count of live consents:
// the gauge is the API's summary, which counts what the button can still
// answer, as the LEDs and MQTT do. It counted every request in the queue
// before, expired ones included.
func TestPendingConsentsLeaveOutExpiredOnes(t *testing.T) {
	clk := clocktest.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	st, err := engine.OpenStore(t.TempDir(), engine.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(st, engine.Options{Clock: clk, ConsentExpiry: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		eng.Shutdown(0)
		st.Close()
	})
	s := eng.NewQuestSpec("cp", "check with a human")
	s.Provider, s.Checkpoints = engine.ProviderExternal, []string{"scout"}
	q, err := eng.NewQuest(s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Scan(q.ID, []string{"alpha first"}); err != nil {
		t.Fatal(err)
	}
	ans, _ := json.Marshal(map[string]any{"verdict": "promising", "evidence": "alpha works on all twenty sample invoices.",
		"citations": []any{}, "new_directions": []string{}})
	res, err := eng.Submit(context.Background(), q.ID, "n1", []byte("```json\n"+string(ans)+"\n```\n"))
	if err != nil || res.Status != engine.AwaitingConsent {
		t.Fatalf("submit: %+v, %v; want awaiting_consent", res, err)
	}
	srv := api.New(api.Options{Engines: api.Only(eng)})
	m := New(Sources{Summary: func() (api.Summary, error) { return srv.Summary(context.Background()) }})
	if got := scrape(t, m)["questbox_consents_pending"]; got != "1" {
		t.Fatalf("a live request: questbox_consents_pending = %s, want 1", got)
	}
	// Past its deadline, before the engine sends it back: the button no
	// longer offers it, so it is not pending.
	clk.Advance(2 * time.Hour)
	if cs, _ := eng.Consents(); len(cs) != 1 {
		t.Fatalf("the queue holds %d requests, want the expired one still there", len(cs))
	}
	if got := scrape(t, m)["questbox_consents_pending"]; got != "0" {
		t.Errorf("an expired request: questbox_consents_pending = %s, want 0", got)
	}
}
