package api

import (
	"strings"
	"testing"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/engine/planttest"
	"github.com/questbox/questbox/internal/clock/clocktest"
)

// planted opens an engine on a fresh store holding a v3.2 quest with a
// council and Teams, and returns the quest's detail view.
func planted(t *testing.T) (QuestDetail, planttest.Fixture) {
	t.Helper()
	st, err := engine.OpenStore(t.TempDir(), engine.StoreOptions{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(st, engine.Options{Clock: clocktest.NewClock(t0)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		eng.Shutdown(0)
		if _, err := eng.Verify(); err != nil {
			t.Errorf("verify: %v", err)
		}
		st.Close()
	})
	spec := eng.NewQuestSpec("ocr", "free OCR for Japanese invoices")
	spec.Provider = engine.ProviderExternal
	q, err := eng.NewQuest(spec)
	if err != nil {
		t.Fatal(err)
	}
	f, err := planttest.V32(eng, q.ID)
	if err != nil {
		t.Fatal(err)
	}
	if q, err = eng.Quest(q.ID); err != nil {
		t.Fatal(err)
	}
	nodes, err := eng.Nodes(q.ID)
	if err != nil {
		t.Fatal(err)
	}
	edges, err := eng.Edges(q.ID)
	if err != nil {
		t.Fatal(err)
	}
	return DetailView(q, nodes, edges), f
}

// strip renders a Team's stages as quest show does.
func strip(tm Team) string {
	var parts []string
	for _, s := range tm.Stages {
		parts = append(parts, s.Stage+" "+s.Mark.Symbol())
	}
	return strings.Join(parts, " → ")
}

// TestFoldTeamsAndCouncils: the detail of a quest with Teams and a council
// folds each Team with its stage strip and each council under its owner
// with every member's provider, vote and dissent.
func TestFoldTeamsAndCouncils(t *testing.T) {
	d, f := planted(t)
	if d.Quest.Level != engine.LevelTeams {
		t.Errorf("level %q, want %q", d.Quest.Level, engine.LevelTeams)
	}
	if len(d.Teams) != 2 {
		t.Fatalf("got %d Teams, want 2: %+v", len(d.Teams), d.Teams)
	}
	for _, tc := range []struct {
		team, status, strip string
		rev, max            int
	}{
		{f.Blocked, "team_blocked", "plan ✓ → exec ✓ → accept ✗ → exec ✓ → accept ✗", 2, 2},
		{f.Revising, "revising", "plan ✓ → exec ✓ → accept ✗ → exec ·", 1, 2},
	} {
		var tm Team
		for _, x := range d.Teams {
			if x.ID == tc.team {
				tm = x
			}
		}
		if got := strip(tm); got != tc.strip || string(tm.Status) != tc.status || tm.RevisionCount != tc.rev || tm.MaxRevisions != tc.max {
			t.Errorf("Team %s: %s %q rev %d/%d, want %s %q rev %d/%d", tc.team, tm.Status, got, tm.RevisionCount, tm.MaxRevisions,
				tc.status, tc.strip, tc.rev, tc.max)
		}
	}
	if len(d.Councils) != 1 || d.Councils[0].Owner != f.Owner || d.Councils[0].Phase != engine.PhaseDesign {
		t.Fatalf("councils: %+v, want one under owner %s in design", d.Councils, f.Owner)
	}
	var got []string
	for _, m := range d.Councils[0].Members {
		got = append(got, m.Role+"/"+m.Provider+"/"+string(m.Status)+"/"+m.Vote+"/"+m.Dissent)
	}
	want := []string{"reviewer/local/running//", "judge/claude/explored/pass/", "judge/gemini/explored/revise/" + planttest.Dissent}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("members:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	golden(t, "fold_v3", struct {
		Teams    []Team         `json:"teams"`
		Councils []OwnerCouncil `json:"councils"`
	}{d.Teams, d.Councils})
}

// TestFoldLeavesV2Alone: a v2 quest's detail has no Teams or councils,
// so its JSON is what it always was.
func TestFoldLeavesV2Alone(t *testing.T) {
	q := fixtureQuest()
	d := DetailView(q, []*engine.Node{fixtureNode()}, []engine.Edge{{From: "n1", To: "n2", Relation: engine.EdgeSpawned}})
	if d.Teams != nil || d.Councils != nil {
		t.Errorf("a v2 quest folded Teams %v, councils %v", d.Teams, d.Councils)
	}
	golden(t, "detail", d)
}
