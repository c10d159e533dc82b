package records

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/storetest"
	"github.com/questbox/questbox/gates"
)

// jsonText draws strings that exercise every escape encoding/json makes.
var jsonText = rapid.OneOf(rapid.String(), rapid.StringOf(rapid.SampledFrom([]rune{'a', 'é', '"', '\\', '<', '>', '&',
	'\b', '\f', '\n', '\r', '\t', 0, 0x1f, 0x7f, '\u2028', '\u2029', utf8RuneError, '日', '\U0001F600'})),
	rapid.Custom(func(t *rapid.T) string { return string(rapid.SliceOf(rapid.Byte()).Draw(t, "bytes")) }))

const utf8RuneError = '\uFFFD'

func genTime(t *rapid.T, label string) time.Time {
	if rapid.Bool().Draw(t, label+" zero") {
		return time.Time{}
	}
	return time.Unix(rapid.Int64Range(0, 4e9).Draw(t, label), rapid.Int64Range(0, 999_999_999).Draw(t, label+" ns")).UTC()
}

func TestAppendRunIsJSONMarshal(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(math.MinInt32, math.MaxInt32)
		r := domain.Run{ID: jsonText.Draw(t, "id"), Quest: jsonText.Draw(t, "quest"), Node: jsonText.Draw(t, "node"),
			Provider: jsonText.Draw(t, "provider"), Attempt: n.Draw(t, "attempt"), Started: genTime(t, "started"),
			Ended: genTime(t, "ended"), Outcome: jsonText.Draw(t, "outcome"), Tokens: n.Draw(t, "tokens"), Reserved: n.Draw(t, "reserved"), Error: jsonText.Draw(t, "error"),
			Name: jsonText.Draw(t, "name"), Role: jsonText.Draw(t, "role"), Exit: jsonText.Draw(t, "exit"), ExitCode: n.Draw(t, "exit code"),
			BytesIn: int64(n.Draw(t, "bytes in")), BytesOut: int64(n.Draw(t, "bytes out")), Redacted: rapid.Bool().Draw(t, "redacted"),
			CostUSD: rapid.OneOf(rapid.Float64(), rapid.SampledFrom([]float64{0, 0.0123, 1e-7, 2.5e21, -0.5})).Draw(t, "cost")}
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendRun(nil, &r); !bytes.Equal(got, want) {
			t.Fatalf("AppendRun:\n%s\njson.Marshal:\n%s", got, want)
		}
	})
}

func TestAppendEventIsJSONMarshal(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		str := jsonText
		ev := domain.Event{Seq: rapid.Uint64().Draw(t, "seq"), Time: genTime(t, "time"), Kind: str.Draw(t, "kind"),
			Quest: str.Draw(t, "quest"), Node: str.Draw(t, "node"), Role: str.Draw(t, "role"),
			Team: str.Draw(t, "team"), Stage: str.Draw(t, "stage"), Phase: str.Draw(t, "phase"), From: str.Draw(t, "from"),
			To: str.Draw(t, "to"), Outcome: str.Draw(t, "outcome"), Feedback: str.Draw(t, "feedback"),
			RootCause: str.Draw(t, "rootcause"), ClaimHash: str.Draw(t, "claimhash"), Reason: str.Draw(t, "reason"),
			Detail: str.Draw(t, "detail")}
		for range rapid.IntRange(0, 3).Draw(t, "facts") {
			ev.Facts = append(ev.Facts, gates.Fact{Rule: str.Draw(t, "rule"), Level: rapid.SampledFrom([]gates.Level{gates.Fail, gates.Review}).Draw(t, "level"),
				Where: str.Draw(t, "where"), Expected: str.Draw(t, "expected"), Actual: str.Draw(t, "actual")})
		}
		if rapid.Bool().Draw(t, "empty facts") && ev.Facts == nil {
			ev.Facts = []gates.Fact{}
		}
		if rapid.Bool().Draw(t, "counters") {
			n := rapid.IntRange(math.MinInt32, math.MaxInt32)
			ev.Counters = &domain.Counters{AgentRuns: n.Draw(t, "runs"), Tokens: n.Draw(t, "tokens"), WallUsed: time.Duration(rapid.Int64().Draw(t, "wall"))}
		}
		if rapid.Bool().Draw(t, "device") {
			ev.Device = &domain.DeviceEvent{What: str.Draw(t, "what"), Press: str.Draw(t, "press"), Result: str.Draw(t, "result"),
				Target: str.Draw(t, "target"), Broker: str.Draw(t, "broker"), Error: str.Draw(t, "error"), Fault: rapid.Bool().Draw(t, "fault")}
		}
		want, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		got, err := AppendEvent(nil, &ev)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("AppendEvent (%v):\n%s\njson.Marshal:\n%s", err, got, want)
		}
	})
	// A level that does not encode is refused, as json.Marshal refuses it.
	ev := domain.Event{Kind: domain.KindVerdict, Facts: []gates.Fact{{Rule: "r", Level: gates.Level(99)}}}
	if _, err := json.Marshal(ev); err == nil {
		t.Fatal("json.Marshal took an invalid level")
	}
	if _, err := AppendEvent(nil, &ev); err == nil {
		t.Error("AppendEvent took an invalid level")
	}
}

// TestEveryRunAndEventFieldIsWritten: a run and an event with every field
// set encode as json.Marshal encodes them — a new field of Run or Event
// fails here until AppendRun or AppendEvent writes it.
func TestEveryRunAndEventFieldIsWritten(t *testing.T) {
	var r domain.Run
	storetest.FillEvery(&r)
	want, err := json.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	if got := AppendRun(nil, &r); !bytes.Equal(got, want) {
		t.Errorf("AppendRun:\n%s\njson.Marshal:\n%s", got, want)
	}
	var ev domain.Event
	storetest.FillEvery(&ev)
	want, err = json.Marshal(&ev)
	if err != nil {
		t.Fatal(err)
	}
	got, err := AppendEvent(nil, &ev)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("AppendEvent: %v\n%s\njson.Marshal:\n%s", err, got, want)
	}
}
