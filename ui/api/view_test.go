package api

import (
	"encoding/json"
	"flag"
	"path/filepath"
	"testing"
	"time"

	"github.com/questbox/questbox/device"
	"github.com/questbox/questbox/device/box"
	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/gates"
	"github.com/questbox/questbox/internal/goldentest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares v's JSON with testdata/name.json (-update rewrites it):
// the JSON shapes of the API are a contract with the CLI, the dashboard,
// MQTT and every script.
func golden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	goldentest.Check(t, filepath.Join("testdata", name+".json"), got, *update, "run go test ./ui/api -update if the change is meant")
}

var t0 = time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)

func fixtureQuest() *engine.Quest {
	return &engine.Quest{ID: "q1", Name: "ocr", Direction: "free OCR for Japanese invoices", Status: engine.QuestActive,
		Mode: engine.ModeTeam, Roles: []string{"scout", "owner"}, Provider: "demo", Gate: "default",
		Limits:   engine.Limits{MaxTries: 3, MaxAgentRuns: 50, WallClock: 24 * time.Hour, TokenBudget: 1000, MaxStalled: 3, OwnerEvery: 3},
		Counters: engine.Counters{AgentRuns: 4, Tokens: 1200, WallUsed: 90 * time.Minute},
		Counts:   domain.CountsOf(map[engine.Status]int{engine.Pending: 2, engine.Explored: 1}), Running: "n4", Created: t0, Updated: t0.Add(time.Hour)}
}

var fixtureFacts = []gates.Fact{{Rule: "contract", Level: gates.Fail, Where: "evidence", Expected: "at least 20 characters", Actual: `"short"`}}

func fixtureNode() *engine.Node {
	return &engine.Node{ID: "n2", Quest: "q1", Parent: "n1", Role: "scout", Hypothesis: "tesseract jpn", Status: engine.Pending,
		Depth: 1, Tries: 1, Outcome: "FAIL", Facts: fixtureFacts, Feedback: engine.Feedback(fixtureFacts), ClaimHash: "abc123",
		Attempts: []engine.Attempt{{At: t0, Run: "r1", Outcome: "FAIL", Facts: fixtureFacts, Feedback: "fix it", TryUsed: true}},
		Runs:     []string{"r1"}, Created: t0, Updated: t0}
}

func TestGoldenViews(t *testing.T) {
	golden(t, "quest", QuestView(fixtureQuest()))
	golden(t, "status", StatusView(fixtureQuest()))
	golden(t, "node", NodeView(fixtureNode()))
	golden(t, "detail", QuestDetail{Quest: QuestView(fixtureQuest()), Nodes: []Node{NodeView(fixtureNode())},
		Edges: edgesView([]engine.Edge{{From: "n1", To: "n2", Relation: engine.EdgeSpawned}})})
	golden(t, "verdict", VerdictView(engine.SubmitResult{Node: "n2", Outcome: "FAIL", Status: engine.Pending, Tries: 1, MaxTries: 3,
		Facts: fixtureFacts, Feedback: engine.Feedback(fixtureFacts), ClaimHash: "abc123"}))
	golden(t, "events", Events{Events: EventViews([]engine.Event{
		{Seq: 7, Time: t0, Kind: engine.KindNode, Quest: "q1", Node: "n2", Role: "scout", From: "running", To: "pending"},
		{Seq: 8, Time: t0, Kind: engine.KindVerdict, Quest: "q1", Node: "n2", Outcome: "FAIL", Facts: fixtureFacts, Feedback: "fix it", RootCause: "contract"},
		{Seq: 9, Time: t0, Kind: engine.KindQuest, Quest: "q1", From: "active", To: "terminated", Reason: "max_agent_runs reached",
			Counters: &engine.Counters{AgentRuns: 50}},
	}), Next: 9})
	golden(t, "consent", ConsentView(engine.ConsentRequest{Node: "n3", Quest: "q1", Role: "owner", Hypothesis: "h", ClaimHash: "c0ffee",
		Why: "review rule fired", Since: t0}, t0.Add(90*time.Second)))
	golden(t, "device", DeviceView(box.Status{
		Snapshot:  device.Snapshot{Backend: "sim", Green: device.LEDView{Pin: 17, Pattern: "on", On: true}, Amber: device.LEDView{Pin: 27, Pattern: "blink 2Hz"}, Red: device.LEDView{Pin: 22, Pattern: "off"}},
		ButtonPin: 23, Simulated: true, State: device.State{ConsentsPending: 1}, Online: true, Now: t0},
		[]Consent{ConsentView(engine.ConsentRequest{Node: "n3", Quest: "q1", Role: "owner", ClaimHash: "c0ffee", Since: t0}, t0)}))
	golden(t, "error", errorBody{Error: errorf(CodeNotFound, "quest q9: not found")})
}

// TestNoEngineTypeCrossesTheAPI pins that the view types hold no engine,
// gates or device type: what a client gets is this package's shape only.
func TestNoEngineTypeCrossesTheAPI(t *testing.T) {
	for _, v := range []any{Quest{}, QuestDetail{}, Node{}, Status{}, Next{}, Scan{}, Verdict{}, Rules{}, Verify{}, Events{},
		Tick{}, Consent{}, Health{}, Export{}, ExportAck{}, ExportRecord{}, Device{}, Press{}, UpdateStatus{}, errorBody{}} {
		checkOwnTypes(t, reflectType(v), map[string]bool{})
	}
}

// TestGoldenCouncilAndTeamViews pins the JSON of a quest with a council and
// Teams, of its stage and member nodes, their edges and events; the v1 and
// v2 golden files of TestGoldenViews stay as they were.
func TestGoldenCouncilAndTeamViews(t *testing.T) {
	q := fixtureQuest()
	q.RoleProviders = map[string]string{"judge": "claude", "reviewer": "local"}
	q.Egress = []string{"local", "anthropic"}
	q.CouncilReviewers, q.CouncilJudges = []string{"local"}, []string{"claude", "gemini"}
	q.PhaseGates = []string{"scout"}
	q.Teams, q.MaxRevisions, q.AcceptMode = true, 2, "judge"
	q.Counts = domain.CountsOf(map[engine.Status]int{engine.CouncilPending: 1, engine.Revising: 1, engine.TeamBlocked: 1})
	team := &engine.Node{ID: "n5", Quest: "q1", Parent: "n1", Role: "poc", Hypothesis: "ship the OCR", Status: engine.Revising,
		TeamKind: "poc", RevisionCount: 1, MaxRevisions: 2, Created: t0, Updated: t0}
	stage := &engine.Node{ID: "n8", Quest: "q1", Parent: "n5", Role: engine.RoleAccepter, Hypothesis: "judge the OCR", Status: engine.Exhausted,
		Team: "n5", Stage: engine.StageAccept, Verdict: "reject", RevisionCount: 1, MaxRevisions: 2, Provider: "gemini", Created: t0, Updated: t0}
	owner := &engine.Node{ID: "n1", Quest: "q1", Role: engine.RoleOwner, Hypothesis: "triage", Status: engine.CouncilPending,
		Phase: engine.PhaseDesign, Created: t0, Updated: t0}
	golden(t, "quest_v3", QuestView(q))
	golden(t, "detail_v3", QuestDetail{Quest: QuestView(q), Nodes: []Node{NodeView(owner), NodeView(team), NodeView(stage)},
		Edges: edgesView([]engine.Edge{{From: "n1", To: "n9", Relation: engine.EdgeCouncilOf}, {From: "n9", To: "n1", Relation: engine.EdgeCouncilReply},
			{From: "n5", To: "n6", Relation: engine.EdgeStagesInto}, {From: "n8", To: "n10", Relation: engine.EdgeRejectsTo}})})
	golden(t, "events_v3", Events{Events: EventViews([]engine.Event{
		{Seq: 11, Time: t0, Kind: engine.KindNode, Quest: "q1", Node: "n1", Role: "owner", Phase: engine.PhaseDesign, From: "pending", To: "council_pending"},
		{Seq: 12, Time: t0, Kind: engine.KindNode, Quest: "q1", Node: "n8", Role: "accepter", Team: "n5", Stage: engine.StageAccept, From: "running", To: "exhausted"},
	}), Next: 12})
	rec, err := json.Marshal(ExportRecord{Quest: "q1", Node: NodeView(team), Stages: StagesView([]*engine.Node{stage})})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "export_team", json.RawMessage(rec))
}

// TestLevel: the level is derived in one place (engine.Quest.Level) and
// the view shows it only above v2.
func TestLevel(t *testing.T) {
	for _, tc := range []struct {
		name      string
		q         engine.Quest
		level     string
		viewLevel string
	}{
		{"solo", engine.Quest{Mode: engine.ModeSolo}, engine.LevelSolo, ""},
		{"team", engine.Quest{Mode: engine.ModeTeam}, engine.LevelTeam, ""},
		{"council", engine.Quest{Mode: engine.ModeTeam, CouncilJudges: []string{"a"}}, "v3 council", "v3 council"},
		{"reviewers only", engine.Quest{Mode: engine.ModeTeam, CouncilReviewers: []string{"a", "b"}}, "v3 council", "v3 council"},
		{"phase gates", engine.Quest{Mode: engine.ModeTeam, CouncilJudges: []string{"a"}, PhaseGates: []string{"scout"}}, "v3.1 council", "v3.1 council"},
		{"teams", engine.Quest{Mode: engine.ModeTeam, Teams: true}, "v3.2 teams", "v3.2 teams"},
		{"teams and council", engine.Quest{Mode: engine.ModeTeam, Teams: true, CouncilJudges: []string{"a"}}, "v3.2 teams", "v3.2 teams"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.q.Level(); got != tc.level {
				t.Errorf("Level() = %q, want %q", got, tc.level)
			}
			if got := QuestView(&tc.q).Level; got != tc.viewLevel {
				t.Errorf("view level = %q, want %q", got, tc.viewLevel)
			}
		})
	}
}

// TestEventSaysWhenConsentsChange pins the one rule the faces read the
// consent queue again on (Event.ConsentsChanged).
func TestEventSaysWhenConsentsChange(t *testing.T) {
	for _, tc := range []struct {
		name string
		ev   engine.Event
		want bool
	}{
		{"consent requested", engine.Event{Kind: engine.KindConsent, Node: "n1", Outcome: "requested"}, true},
		{"consent approved", engine.Event{Kind: engine.KindConsent, Node: "n1", Outcome: "approved"}, true},
		{"node awaits consent", engine.Event{Kind: engine.KindNode, Node: "n1", From: "running", To: "awaiting_consent"}, true},
		{"node leaves consent", engine.Event{Kind: engine.KindNode, Node: "n1", From: "awaiting_consent", To: "passed"}, true},
		{"node runs", engine.Event{Kind: engine.KindNode, Node: "n1", From: "pending", To: "running"}, false},
		{"quest from awaiting_consent", engine.Event{Kind: engine.KindQuest, Quest: "q1", From: "awaiting_consent", To: "active"}, false},
		{"verdict", engine.Event{Kind: engine.KindVerdict, Node: "n1", Outcome: "REVIEW"}, false},
	} {
		if got := EventView(tc.ev).ConsentsChanged; got != tc.want {
			t.Errorf("%s: ConsentsChanged = %v, want %v", tc.name, got, tc.want)
		}
	}
}
