package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/engine/planttest"
	"github.com/questbox/questbox/ui/api"
)

// plantV32 makes quest q1 in data a v3.2 quest with a council and Teams.
func plantV32(t *testing.T, data string) planttest.Fixture {
	t.Helper()
	must(t, 0, "", "quest", "new", "ocr", "--direction", "free OCR", "--provider", "external", "--data", data)
	st, err := engine.OpenStore(data, engine.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	eng, err := engine.New(st, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Shutdown(0)
	f, err := planttest.V32(eng, "q1")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestQuestShowFoldsTeamsAndCouncils: `quest show` prints the level, each
// Team as one line with its stage strip, the council under its owner with
// each member's provider and vote and the dissent; stage nodes and members
// are not rows of the node table. --json carries the same fold.
func TestQuestShowFoldsTeamsAndCouncils(t *testing.T) {
	data := dataDir(t)
	f := plantV32(t, data)
	out := must(t, 0, "", "quest", "show", "q1", "--data", data).stdout
	for _, want := range []string{
		"\nlevel v3.2 teams, council reviewers local judges claude,gemini, Teams (max revisions 2, accept by judge)\n",
		"plan ✓ → exec ✓ → accept ✗ → exec ✓ → accept ✗ (rev 2/2)",
		"plan ✓ → exec ✓ → accept ✗ → exec · (rev 1/2)",
		"\ncouncil of owner " + f.Owner + " (council_pending, design phase):\n",
		"vote pass\n", "vote revise\n",
		"dissent of " + f.Judges[1] + " (gemini): " + planttest.Dissent,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("quest show has no %q:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, f.Blocked+" ") && !strings.Contains(line, "team_blocked") {
			t.Errorf("the Team's row: %q", line)
		}
		for _, id := range append([]string{f.Reviewer, f.BlockedStages[0], f.RevisingStages[3]}, f.Judges...) {
			if strings.HasPrefix(line, id+" ") && !strings.HasPrefix(line, id+" (") {
				t.Errorf("%s is a row of the node table: %q", id, line)
			}
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, f.Blocked) && strings.Contains(l, "plan ✓") && !strings.Contains(l, "poc") {
			t.Errorf("the Team's line does not name its kind: %q", l)
		}
	}
	var d api.QuestDetail
	decode(t, must(t, 0, "", "quest", "show", "q1", "--json", "--data", data), &d)
	if d.Quest.Level != engine.LevelTeams || len(d.Teams) != 2 || len(d.Councils) != 1 || len(d.Councils[0].Members) != 3 {
		t.Errorf("--json: level %q, %d Teams, %d councils", d.Quest.Level, len(d.Teams), len(d.Councils))
	}
}

// TestQuestShowOfATeamQuestHasNoLevel: a v2 quest's `quest show` prints as
// it always did: no level line, no Teams, no council.
func TestQuestShowOfATeamQuestHasNoLevel(t *testing.T) {
	data := dataDir(t)
	must(t, 0, "", "quest", "new", "ocr", "--direction", "free OCR", "--provider", "external", "--data", data)
	must(t, 0, "", "scan", "q1", "tesseract jpn", "--data", data)
	out := must(t, 0, "", "quest", "show", "q1", "--data", data).stdout
	for _, no := range []string{"level", "Teams:", "council"} {
		if strings.Contains(out, no) {
			t.Errorf("a v2 quest's show has %q:\n%s", no, out)
		}
	}
}

// TestExportListsATeamsStages: `export` writes a Team's record with its
// stage nodes, oldest first, and its revision count.
func TestExportListsATeamsStages(t *testing.T) {
	data := dataDir(t)
	f := plantV32(t, data)
	out := must(t, 0, "", "export", "q1", "--data", data).stdout
	found := false
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var rec api.ExportRecord
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("export line %q: %v", line, err)
		}
		if rec.ID != f.Blocked {
			if len(rec.Stages) > 0 {
				t.Errorf("%s (%s) lists stages %v", rec.ID, rec.Role, rec.Stages)
			}
			continue
		}
		found = true
		var ids []string
		for _, s := range rec.Stages {
			ids = append(ids, s.ID)
		}
		if !slices.Equal(ids, f.BlockedStages) || rec.RevisionCount != 2 || rec.Status != api.NodeTeamBlocked || rec.TeamKind != "poc" {
			t.Errorf("the Team's record: stages %v, revisions %d, status %s, kind %q; want stages %v, 2, team_blocked, poc",
				ids, rec.RevisionCount, rec.Status, rec.TeamKind, f.BlockedStages)
		}
		if rec.Stages[2].Stage != engine.StageAccept || rec.Stages[2].Verdict != api.VerdictReject {
			t.Errorf("third stage: %+v, want the accepter's reject", rec.Stages[2])
		}
	}
	if !found {
		t.Errorf("no record of the Team %s in the export:\n%s", f.Blocked, out)
	}
}

// TestEventLineNamesTeamStageAndPhase: a node event's line names its Team
// and stage, or its phase; a v1/v2 node event's line is unchanged.
func TestEventLineNamesTeamStageAndPhase(t *testing.T) {
	at := time.Date(2026, 12, 3, 12, 0, 5, 0, time.Local)
	for _, tc := range []struct {
		name string
		ev   api.Event
		want string
	}{
		{"v2", api.Event{Time: at, Kind: api.KindNode, Quest: "q1", Node: "n3", Role: "scout", From: "pending", To: "running"},
			"12:00:05 q1 n3 scout      pending → running"},
		{"stage", api.Event{Time: at, Kind: api.KindNode, Quest: "q1", Node: "n8", Role: "accepter", Team: "n5", Stage: "accept", From: "pending", To: "running"},
			"12:00:05 q1 n8 accepter   pending → running  [Team n5 accept]"},
		{"phase", api.Event{Time: at, Kind: api.KindNode, Quest: "q1", Node: "n1", Role: "owner", Phase: "design", From: "pending", To: "council_pending"},
			"12:00:05 q1 n1 owner      pending → council_pending  [design phase]"},
	} {
		if got := formatEvent(tc.ev); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestStateTextNamesBlockedTeams: `device status` says why red is lit
// when a Team is blocked.
func TestStateTextNamesBlockedTeams(t *testing.T) {
	if got, want := stateText(api.State{TeamsBlocked: 1, AgentsRunning: 1}), "1 quest(s) with a blocked Team; 1 agent run(s)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
