package api

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/questbox/questbox/device"
	"github.com/questbox/questbox/device/box"
	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/gates"
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
	path := filepath.Join("testdata", name+".json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s changed:\n--- got\n%s--- want\n%s(run go test ./ui/api -update if the change is meant)", path, got, want)
	}
}

var t0 = time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)

func fixtureQuest() *engine.Quest {
	return &engine.Quest{ID: "q1", Name: "ocr", Direction: "free OCR for Japanese invoices", Status: engine.QuestActive,
		Mode: engine.ModeTeam, Roles: []string{"scout", "owner"}, Provider: "demo", Gate: "default",
		Limits:   engine.Limits{MaxTries: 3, MaxAgentRuns: 50, WallClock: 24 * time.Hour, TokenBudget: 1000, MaxStalled: 3, OwnerEvery: 3},
		Counters: engine.Counters{AgentRuns: 4, Tokens: 1200, WallUsed: 90 * time.Minute},
		Counts:   map[engine.Status]int{engine.Pending: 2, engine.Explored: 1}, Running: "n4", Created: t0, Updated: t0.Add(time.Hour)}
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
		Why: "review rule fired", Since: t0}, t0.Add(90*time.Second), false))
	golden(t, "device", DeviceView(box.Status{
		Snapshot:  device.Snapshot{Backend: "sim", Green: device.LEDView{Pin: 17, Pattern: "on", On: true}, Amber: device.LEDView{Pin: 27, Pattern: "blink 2Hz"}, Red: device.LEDView{Pin: 22, Pattern: "off"}},
		ButtonPin: 23, Simulated: true, State: device.State{ConsentsPending: 1}, Online: true,
		Consents: []engine.ConsentRequest{{Node: "n3", Quest: "q1", Role: "owner", ClaimHash: "c0ffee", Since: t0}}, Expired: []bool{false}, Now: t0}))
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
