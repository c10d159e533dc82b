package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/questbox/questbox/ui/api"
)

// quest new --max-agent-runs 5 with a council of five: the scout runs,
// the council does not fit in the four runs left and is never seated,
// and the quest ends naming the budget; no more than five runs, ever.
func TestCouncilOfFiveWithinMaxAgentRuns(t *testing.T) {
	data := dataDir(t)
	must(t, 0, "", "quest", "new", "ocr", "--direction", "free OCR for invoices", "--provider", "demo",
		"--council", "reviewer:2,judge:3", "--max-agent-runs", "5", "--data", data)
	var d api.QuestDetail
	for range 4 {
		must(t, 0, "", "tick", "--data", data)
		decode(t, must(t, 0, "", "quest", "show", "q1", "--json", "--data", data), &d)
		if d.Quest.Used.AgentRuns > 5 {
			t.Fatalf("%d agent runs of a budget of 5", d.Quest.Used.AgentRuns)
		}
	}
	if want := "max_agent_runs 5: 1 used, a council of 5 needs 5"; d.Quest.Status != api.QuestTerminated || d.Quest.Reason != want {
		t.Fatalf("quest %s %q, want terminated: %q", d.Quest.Status, d.Quest.Reason, want)
	}
	for _, n := range d.Nodes {
		if n.Role == "reviewer" || n.Role == "judge" {
			t.Errorf("council member %s made for a council that was not seated", n.ID)
		}
	}
}

// An openai provider's max_tokens sets what its runs reserve: 2048
// tokens for the prompt and the cap. A quest whose budget has room for
// one reservation runs once; the next run's reservation does not fit in
// what its first left, and the quest ends naming the token budget.
func TestTokenBudgetReservesAnOpenAIProvidersMaxTokens(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var req struct {
			MaxTokens int `json:"max_tokens"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.MaxTokens != 300 {
			http.Error(w, fmt.Sprintf("max_tokens %d, %v", req.MaxTokens, err), http.StatusBadRequest)
			return
		}
		answer := "```json\n{\"verdict\":\"promising\",\"evidence\":\"the server read the invoices\",\"citations\":[],\"new_directions\":[\"read them again\"]}\n```"
		_ = json.NewEncoder(w).Encode(map[string]any{
			"model":   "m",
			"choices": []any{map[string]any{"message": map[string]any{"content": answer}}},
			"usage":   map[string]any{"total_tokens": 1500},
		})
	}))
	defer srv.Close()
	cfg := writeConfig(t, fmt.Sprintf("[providers.llm]\ntype = \"openai\"\nbase_url = %q\nmodel = \"m\"\nmax_tokens = 300\nvendor = \"local\"\n", srv.URL))
	data := dataDir(t)
	budget := 1500 + 2048 + 300 - 1
	must(t, 0, "", "quest", "new", "ocr", "--direction", "free OCR for invoices", "--provider", "llm", "--mode", "solo",
		"--token-budget", fmt.Sprint(budget), "--config", cfg, "--data", data)
	var d api.QuestDetail
	for range 3 {
		must(t, 0, "", "tick", "--config", cfg, "--data", data)
	}
	decode(t, must(t, 0, "", "quest", "show", "q1", "--json", "--config", cfg, "--data", data), &d)
	want := fmt.Sprintf("token_budget %d: 1500 used and 0 reserved by runs in flight, a run of n2 (poc) on llm reserves 2348", budget)
	if calls.Load() != 1 || d.Quest.Used.Tokens != 1500 || d.Quest.Status != api.QuestTerminated || d.Quest.Reason != want {
		t.Fatalf("%d requests, %d tokens, quest %s %q; want one request, 1500 tokens, terminated: %q",
			calls.Load(), d.Quest.Used.Tokens, d.Quest.Status, d.Quest.Reason, want)
	}
}
