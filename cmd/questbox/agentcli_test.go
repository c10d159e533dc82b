package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/questbox/questbox/internal/daemon/daemontest"
	"github.com/questbox/questbox/ui/api"
)

// fakeAgentCLI writes an executable that reads its prompt and prints the
// file out beside it: an agent CLI's documented output, without the CLI.
func fakeAgentCLI(t *testing.T, dir, name, out string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name+".out"), []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, name)
	script := "#!/bin/sh\ncat >/dev/null\ncat \"$0.out\"\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// claudeBox is a data directory and a config whose provider "claude" is
// a claude-code preset running a fake CLI that prints out; it returns the
// --config and --data flags.
func claudeBox(t *testing.T, out string) []string {
	t.Helper()
	dir := daemontest.ShortDir(t)
	bin := fakeAgentCLI(t, dir, "claude", out)
	cfg := runsConfig(t, dir, `
[providers.claude]
type = "claude-code"
argv = ["`+bin+`", "-p", "--output-format", "json"]
vendor = "local"
`)
	return []string{"--config", cfg, "--data", filepath.Join(dir, "data")}
}

// A claude-code provider's run records the tokens and the cost Claude
// Code reported, `runs` shows them, and the quest's token budget counts
// the reported tokens, not an estimate of the printed text.
func TestClaudeCodePresetTokensAndCost(t *testing.T) {
	answer := "Looked.\n```json\n{\"verdict\": \"promising\", \"evidence\": \"the parser rejects a truncated stream, so the idea needs a framing layer\", \"citations\": [], \"new_directions\": [\"add a framing layer\"]}\n```"
	out := `{"type":"result","subtype":"success","is_error":false,"num_turns":3,"result":` + jsonString(answer) +
		`,"session_id":"s","total_cost_usd":0.4321,"usage":{"input_tokens":900,"cache_read_input_tokens":80,"output_tokens":120}}` + "\n"
	d := claudeBox(t, out)
	must(t, 0, "", append([]string{"quest", "new", "cli", "--direction", "does the preset count", "--provider", "claude",
		"--mode", "solo", "--max-tries", "1", "--token-budget", "4196"}, d...)...) // room for one run's reservation (4096)
	must(t, 0, "", append([]string{"tick"}, d...)...)

	var runs []api.Run
	decode(t, must(t, 0, "", append([]string{"runs", "--json"}, d...)...), &runs)
	if len(runs) != 1 {
		t.Fatalf("runs: %+v, want one", runs)
	}
	if r := runs[0]; r.Tokens != 1100 || r.CostUSD != 0.4321 || r.Exit != "answered" {
		t.Fatalf("run %+v: want 1100 tokens (900+80+120), cost 0.4321, answered", r)
	}
	text := must(t, 0, "", append([]string{"runs"}, d...)...).stdout
	if !strings.Contains(text, "COST") || !strings.Contains(text, "$0.4321") {
		t.Errorf("runs does not show the cost:\n%s", text)
	}

	var q struct {
		Quest api.Quest `json:"quest"`
	}
	decode(t, must(t, 0, "", append([]string{"quest", "show", "q1", "--json"}, d...)...), &q)
	if q.Quest.Used.Tokens != 1100 {
		t.Errorf("quest used %d tokens, want the 1100 reported", q.Quest.Used.Tokens)
	}
	// 1100 of 4196: the next run's reservation does not fit, and the next
	// tick ends the quest on its budget.
	must(t, 0, "", append([]string{"tick"}, d...)...)
	decode(t, must(t, 0, "", append([]string{"quest", "show", "q1", "--json"}, d...)...), &q)
	if !strings.HasPrefix(q.Quest.Reason, "token_budget 4196: 1100 used") {
		t.Errorf("quest %s (%s), want it ended on its token budget", q.Quest.Status, q.Quest.Reason)
	}
}

// An is_error result is the agent's failure: the run crashed with Claude
// Code's own reason, and its tokens and cost still count.
func TestClaudeCodePresetError(t *testing.T) {
	d := claudeBox(t, `{"type":"result","subtype":"error_during_execution","is_error":true,"result":"API Error: 529 overloaded","total_cost_usd":0.01,"usage":{"input_tokens":50,"output_tokens":0}}`)
	must(t, 0, "", append([]string{"quest", "new", "cli", "--direction", "fail", "--provider", "claude", "--mode", "solo", "--max-tries", "1"}, d...)...)
	must(t, 0, "", append([]string{"tick"}, d...)...)
	var runs []api.Run
	decode(t, must(t, 0, "", append([]string{"runs", "--json"}, d...)...), &runs)
	if len(runs) != 1 {
		t.Fatalf("runs: %+v, want one", runs)
	}
	r := runs[0]
	if r.Outcome != "FAIL" || r.Tokens != 50 || r.CostUSD != 0.01 {
		t.Fatalf("run %+v: want FAIL, 50 tokens, cost 0.01", r)
	}
	show := must(t, 0, "", append([]string{"quest", "show", "q1"}, d...)...).stdout
	if !strings.Contains(show, "error_during_execution: API Error: 529 overloaded") {
		t.Errorf("quest show does not give Claude Code's reason:\n%s", show)
	}
}

// jsonString is s as a JSON string.
func jsonString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}
