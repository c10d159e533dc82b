package main

import (
	"strings"
	"testing"

	"github.com/questbox/questbox/ui/api"
)

// TestQuestNewTeams: --teams and --preset teams open the root as a Team
// with its planner queued; --teams is refused in solo mode, and the Team
// flags without --teams are a usage error.
func TestQuestNewTeams(t *testing.T) {
	data := dataDir(t)
	r := must(t, 1, "", "quest", "new", "solo", "--direction", "d", "--mode", "solo", "--teams", "--data", data)
	if !strings.Contains(r.stderr, "--teams needs mode team") {
		t.Errorf("solo --teams: got %q, want it refused naming the mode", r.stderr)
	}
	r = must(t, 1, "", "quest", "new", "x", "--direction", "d", "--max-revisions", "3", "--data", data)
	if !strings.Contains(r.stderr, "need --teams") {
		t.Errorf("--max-revisions alone: got %q, want a usage error", r.stderr)
	}
	must(t, 1, "", "quest", "new", "x", "--direction", "d", "--teams", "--accept-mode", "vote", "--data", data)
	for _, args := range [][]string{
		{"--preset", "teams"},
		{"--teams", "--max-revisions", "3", "--accept-mode", "human"},
	} {
		var q api.Quest
		decode(t, must(t, 0, "", append([]string{"quest", "new", "ocr", "--direction", "free OCR", "--json", "--data", data}, args...)...), &q)
		var d api.QuestDetail
		decode(t, must(t, 0, "", "quest", "show", q.ID, "--json", "--data", data), &d)
		if len(d.Nodes) != 2 || d.Nodes[0].Status != "revising" || d.Nodes[1].Role != "planner" || d.Nodes[1].Status != "pending" {
			t.Fatalf("%v: got nodes %+v, want the root Team revising and its planner pending", args, d.Nodes)
		}
		if len(d.Edges) != 1 || d.Edges[0].Relation != "stages_into" {
			t.Fatalf("%v: got edges %+v, want the Team stages_into its planner", args, d.Edges)
		}
	}
}
