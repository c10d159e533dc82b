package api

import (
	"testing"
	"time"

	"github.com/questbox/questbox/engine"
)

// The run view's JSON is pinned like every view's (testdata/runs.json): a
// crashed run with its log, and one still running.
func TestGoldenRunView(t *testing.T) {
	at := time.Date(2026, 12, 3, 14, 0, 0, 0, time.UTC)
	has := func(id string) bool { return id == "r3" }
	golden(t, "runs", []Run{
		RunView(engine.Run{ID: "r3", Name: "quest:q1:n2:1", Quest: "q1", Node: "n2", Role: "scout", Provider: "agent", Attempt: 1,
			Started: at, Ended: at.Add(1500 * time.Millisecond), Outcome: "FAIL", Exit: engine.ExitCrashed, ExitCode: 3,
			Tokens: 160, BytesIn: 642, BytesOut: 27, Error: ""}, has),
		RunView(engine.Run{ID: "r4", Name: "quest:q1:n3:2", Quest: "q1", Node: "n3", Role: "poc", Provider: "agent", Attempt: 2,
			Started: at.Add(time.Minute)}, has),
	})
}
