package main

import (
	"github.com/questbox/questbox/ui/api"

	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine"
)

// TestTick runs one round with a real command provider: `tick` dispatches
// the root node, waits for the agent and prints the verdict.
func TestTick(t *testing.T) {
	data := dataDir(t)
	canned := filepath.Join(t.TempDir(), "answer")
	os.WriteFile(canned, []byte(answer("dead", "a canned answer, dead on arrival.")), 0o644)
	cfg := writeConfig(t, `[providers.canned]
type = "command"
argv = ["sh", "-c", "cat > /dev/null; cat `+canned+`"]
`)
	c := []string{"--config", cfg, "--data", data}
	must(t, 0, "", append([]string{"quest", "new", "canned", "--direction", "canned answers", "--provider", "canned"}, c...)...)
	r := must(t, 0, "", append([]string{"tick"}, c...)...)
	for _, want := range []string{"q1 n1 scout      pending → running", "q1 n1 verdict PASS", "passed → aborted", "tick: dispatched 1 (n1)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("tick output lacks %q:\n%s", want, r.stdout)
		}
	}
	var v api.Tick
	decode(t, must(t, 0, "", append([]string{"tick", "--json"}, c...)...), &v)
	if len(v.Dispatched) != 1 {
		t.Errorf("second tick dispatched %v, want the owner", v.Dispatched)
	}
	var st api.Status
	decode(t, must(t, 0, "", append([]string{"status", "q1", "--json"}, c...)...), &st)
	if st.Counts[string(engine.Aborted)] != 1 || st.Used.AgentRuns != 2 {
		t.Errorf("after two ticks: %v, %d runs", st.Counts, st.Used.AgentRuns)
	}
}
