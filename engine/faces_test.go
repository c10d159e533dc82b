package engine_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/questbox/questbox/internal/clock/clocktest"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/planttest"
	"github.com/questbox/questbox/engine/storetest"
)

// at is the clock of every engine here: a store opened twice reads the
// same.
var at = time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)

// open opens the engine on the store in dir; close (also at cleanup,
// once) shuts it down, verifies and closes the store.
func open(t *testing.T, dir string) (e *engine.Engine, close func()) {
	t.Helper()
	s, err := engine.OpenStore(dir, engine.StoreOptions{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	e, err = engine.New(s, engine.Options{Clock: clocktest.NewClock(at)})
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	close = func() {
		once.Do(func() {
			e.Shutdown(0)
			if _, err := e.Verify(); err != nil {
				t.Errorf("verify at close: %v", err)
			}
			if err := s.Close(); err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(close)
	return e, close
}

// plantedStore makes a store in dir holding a v3.2 quest with a council
// and Teams (planttest.V32).
func plantedStore(t *testing.T, dir string) (*engine.Engine, planttest.Fixture, func()) {
	t.Helper()
	e, close := open(t, dir)
	spec := e.NewQuestSpec("ocr", "free OCR for Japanese invoices")
	spec.Provider, spec.Mode = engine.ProviderExternal, engine.ModeTeam
	q, err := e.NewQuest(spec)
	if err != nil {
		t.Fatal(err)
	}
	f, err := planttest.V32(e, q.ID)
	if err != nil {
		t.Fatal(err)
	}
	return e, f, close
}

// TestNodeEventsCarryTeamStageAndPhase: a node's status event names its
// Team and stage, or its phase, when it has them.
func TestNodeEventsCarryTeamStageAndPhase(t *testing.T) {
	e, f, _ := plantedStore(t, t.TempDir())
	evs, err := e.Events(0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]engine.Event{}
	for _, ev := range evs {
		if ev.Kind == engine.KindNode && ev.To != string(engine.Pending) {
			got[ev.Node] = ev
		}
	}
	if ev := got[f.Owner]; ev.Phase != engine.PhaseDesign || ev.To != string(engine.CouncilPending) || ev.Team != "" {
		t.Errorf("owner's event: %+v, want phase design, to council_pending", ev)
	}
	if ev := got[f.BlockedStages[2]]; ev.Team != f.Blocked || ev.Stage != engine.StageAccept || ev.Role != engine.RoleAccepter {
		t.Errorf("accepter's event: %+v, want team %s, stage accept", ev, f.Blocked)
	}
	if ev := got[f.Blocked]; ev.To != string(engine.TeamBlocked) || ev.Team != "" || ev.Stage != "" {
		t.Errorf("Team's event: %+v, want to team_blocked without team or stage", ev)
	}
	// The event a node is created with carries them too.
	created := false
	for _, ev := range evs {
		if ev.Node == f.RevisingStages[3] && ev.Reason == "created" {
			created = true
			if ev.Team != f.Revising || ev.Stage != engine.StageExec {
				t.Errorf("created event of a stage: %+v, want team %s, stage exec", ev, f.Revising)
			}
		}
	}
	if !created {
		t.Errorf("no created event of %s", f.RevisingStages[3])
	}
}

// TestExportListsTeamStages: a Team's export record lists its stage
// nodes; other records have none.
func TestExportListsTeamStages(t *testing.T) {
	e, f, _ := plantedStore(t, t.TempDir())
	b, err := e.ExportBegin(f.Quest, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var team *engine.Node
	for _, n := range b.Nodes {
		if n.ID == f.Blocked {
			team = n
		}
	}
	if team == nil || team.RevisionCount != 2 {
		t.Fatalf("export batch: no team_blocked Team %s with 2 revisions in %d nodes", f.Blocked, len(b.Nodes))
	}
	var ids []string
	for _, n := range b.Stages[f.Blocked] {
		ids = append(ids, n.ID)
	}
	if !reflect.DeepEqual(ids, f.BlockedStages) {
		t.Errorf("stages of %s: got %v, want %v", f.Blocked, ids, f.BlockedStages)
	}
	if len(b.Stages) != 1 {
		t.Errorf("stages listed for %d nodes, want only the one Team that is terminal", len(b.Stages))
	}
}

// TestCouncilAndTeamsVerifyAndSalvage: a store holding councils and Teams
// verifies; with both meta pages destroyed, salvage rebuilds it from its
// pages losing no node, field, edge or count.
func TestCouncilAndTeamsVerifyAndSalvage(t *testing.T) {
	dir := t.TempDir()
	e, f, close := plantedStore(t, dir)
	rep, err := e.Verify()
	if err != nil || len(rep.Problems) > 0 {
		t.Fatalf("verify: %v %v", err, rep.Problems)
	}
	close()
	raw, err := os.ReadFile(filepath.Join(dir, engine.StoreFile))
	if err != nil {
		t.Fatal(err)
	}
	damaged := t.TempDir()
	if err := os.WriteFile(filepath.Join(damaged, engine.StoreFile), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	// What the undamaged store reads after a restart (which sends the
	// running member back to pending) is what the salvaged one must.
	e, _ = open(t, dir)
	before := snapshot(t, e, f.Quest)
	sf, err := storetest.Open(filepath.Join(damaged, engine.StoreFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := sf.GarbageMeta(0); err != nil {
		t.Fatal(err)
	}
	if err := sf.GarbageMeta(1); err != nil {
		t.Fatal(err)
	}
	sf.Close()
	srep, err := engine.Salvage(damaged, time.Date(2026, 12, 3, 4, 5, 6, 0, time.UTC))
	if err != nil || srep.Verify != "ok" {
		t.Fatalf("salvage: %+v, %v", srep, err)
	}
	if srep.Healthy || len(srep.Rebuilt) == 0 {
		t.Errorf("salvage found the store healthy (%v) or rebuilt nothing: the damage did not bite", srep.Healthy)
	}
	if len(srep.Lost) > 0 {
		t.Errorf("salvage lost %v", srep.Lost)
	}
	e2, _ := open(t, damaged)
	after := snapshot(t, e2, f.Quest)
	if !reflect.DeepEqual(after, before) {
		t.Errorf("after salvage:\n%s\nbefore:\n%s", after, before)
	}
}

// snapshot is a quest's nodes, edges and counts as JSON, for comparing.
func snapshot(t *testing.T, e *engine.Engine, quest string) string {
	t.Helper()
	q, err := e.Quest(quest)
	if err != nil {
		t.Fatal(err)
	}
	ns, err := e.Nodes(quest)
	if err != nil {
		t.Fatal(err)
	}
	es, err := e.Edges(quest)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.MarshalIndent(struct {
		Counts          engine.StatusCounts
		Council, Judges []string
		Teams           bool
		Nodes           []*engine.Node
		Edges           []engine.Edge
		Running         string
	}{q.Counts, q.CouncilReviewers, q.CouncilJudges, q.Teams, ns, es, q.Running}, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// TestHasBlockedTeam: a quest not done with a team_blocked node wants the
// red LED; a done one does not, nor one without.
func TestHasBlockedTeam(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status engine.QuestStatus
		counts map[engine.Status]int
		want   bool
	}{
		{"active, blocked", engine.QuestActive, map[engine.Status]int{engine.TeamBlocked: 1}, true},
		{"stopped, blocked", engine.QuestStopped, map[engine.Status]int{engine.TeamBlocked: 2}, true},
		{"terminated, blocked", engine.QuestTerminated, map[engine.Status]int{engine.TeamBlocked: 1}, true},
		{"done, blocked", engine.QuestDone, map[engine.Status]int{engine.TeamBlocked: 1}, false},
		{"active, revising", engine.QuestActive, map[engine.Status]int{engine.Revising: 1, engine.Exhausted: 3}, false},
	} {
		q := engine.Quest{Status: tc.status, Counts: domain.CountsOf(tc.counts)}
		if got := q.HasBlockedTeam(); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}
