package main

import (
	"strings"
	"testing"

	"github.com/questbox/questbox/ui/api"
)

// TestQuestNewCouncil: --preset council makes the owner's turns a council
// of two reviewers and a judge, whose members the demo plays; a council
// in solo mode, an unknown preset and a malformed --council are refused
// with exit 1 and a reason.
func TestQuestNewCouncil(t *testing.T) {
	data := dataDir(t)
	must(t, 0, "", "quest", "new", "ocr", "--direction", "free OCR for invoices", "--preset", "council", "--provider", "demo", "--data", data)
	roles := map[string]int{}
	for range 4 {
		must(t, 0, "", "tick", "--data", data)
		var d api.QuestDetail
		decode(t, must(t, 0, "", "quest", "show", "q1", "--json", "--data", data), &d)
		roles = map[string]int{}
		for _, n := range d.Nodes {
			roles[n.Role]++
		}
	}
	if roles["reviewer"] != 2 || roles["judge"] != 1 {
		t.Errorf("after four ticks: got roles %v, want a council of 2 reviewers and 1 judge", roles)
	}
	must(t, 0, "", "quest", "new", "gated", "--direction", "d", "--provider", "demo", "--preset", "council", "--gates", "scout,poc", "--checkpoint", "scout_gate", "--data", data)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--mode", "solo", "--council", "reviewer:1"}, "mode solo has no owner"},
		{[]string{"--preset", "nope"}, `unknown --preset "nope" (known: council)`},
		{[]string{"--council", "judges:1"}, `"judges" is not reviewer or judge`},
		{[]string{"--council", "judge:1", "--council-provider", "judge=gemini"}, `council provider "gemini" is not configured`},
		{[]string{"--gates", "scout"}, "phase gates (scout) need a council"},
		{[]string{"--council", "judge:1", "--gates", "owner"}, `phase gate "owner" is not a worker role`},
		{[]string{"--council", "judge:1", "--checkpoint", "scout_gate"}, `checkpoint "scout_gate" is not one of the quest's roles`},
	} {
		args := append([]string{"quest", "new", "x", "--direction", "d", "--provider", "demo", "--data", data}, c.args...)
		if r := must(t, 1, "", args...); !strings.Contains(r.stderr, c.want) {
			t.Errorf("questbox %s: stderr %q, want it to contain %q", strings.Join(args, " "), r.stderr, c.want)
		}
	}
}
