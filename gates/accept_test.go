package gates

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestParseAcceptAnswer(t *testing.T) {
	tests := []struct {
		name  string
		raw   string
		want  AcceptAnswer
		valid bool
	}{
		{"accept", `{"decision":"accept","reason":"meets the plan","citations":[{"quote":"92% on the set"}]}`,
			AcceptAnswer{Decision: "accept", Reason: "meets the plan", Citations: []AcceptQuote{{Quote: "92% on the set"}}}, true},
		{"reject", "text\n```json\n{\"decision\":\"reject\",\"reason\":\"no numbers\",\"revision_target\":\"executer\"}\n```",
			AcceptAnswer{Decision: "reject", Reason: "no numbers", RevisionTarget: "executer"}, true},
		{"reject without target", `{"decision":"reject","reason":"no"}`, AcceptAnswer{}, false},
		{"accept with target", `{"decision":"accept","reason":"ok","revision_target":"planner","citations":[{"quote":"x"}]}`, AcceptAnswer{}, false},
		{"unknown decision", `{"decision":"pass","reason":"ok"}`, AcceptAnswer{}, false},
		{"unknown field", `{"decision":"reject","reason":"r","revision_target":"planner","verdict":"pass"}`, AcceptAnswer{}, false},
		{"blank reason", `{"decision":"reject","reason":" ","revision_target":"planner"}`, AcceptAnswer{}, false},
		{"quote not a string", `{"decision":"accept","reason":"r","citations":[{"quote":1}]}`, AcceptAnswer{}, false},
		{"not json", `I accept`, AcceptAnswer{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, facts := ParseAcceptAnswer([]byte(tt.raw))
			if (len(facts) == 0) != tt.valid {
				t.Fatalf("got facts %v, want valid=%v", facts, tt.valid)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestCheckAccept(t *testing.T) {
	deliverable := "Tesseract jpn scored 92% on the invoice set."
	tests := []struct {
		name     string
		in       AcceptAnswer
		decision string
		facts    int
	}{
		{"verified quote", AcceptAnswer{Decision: "accept", Reason: "ok", Citations: []AcceptQuote{{Quote: "scored  92%"}}}, "accept", 0},
		{"no quote", AcceptAnswer{Decision: "accept", Reason: "ok"}, "reject", 1},
		{"invented quote", AcceptAnswer{Decision: "accept", Reason: "ok", Citations: []AcceptQuote{{Quote: "scored 99%"}}}, "reject", 1},
		{"reject stays", AcceptAnswer{Decision: "reject", Reason: "r", RevisionTarget: "planner"}, "reject", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, facts := CheckAccept(tt.in, deliverable)
			if got.Decision != tt.decision || len(facts) != tt.facts {
				t.Fatalf("got %s with %d facts, want %s with %d", got.Decision, len(facts), tt.decision, tt.facts)
			}
			if got.Decision == AcceptReject && got.RevisionTarget == "" {
				t.Fatalf("got a reject without a revision target")
			}
		})
	}
}

func FuzzParseAcceptAnswer(f *testing.F) {
	f.Add([]byte(`{"decision":"accept","reason":"r","citations":[{"quote":"q"}]}`))
	f.Add([]byte("```json\n{\"decision\":\"reject\",\"reason\":\"r\",\"revision_target\":\"planner\"}\n```"))
	f.Add([]byte(`{"decision":"reject","reason":"r","revision_target":"x","citations":[{}]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var fs factList
		if text, ok := locateJSON(raw, &fs); ok {
			checkFastAccept(t, text)
		}
		got, facts := ParseAcceptAnswer(raw)
		checkFuzzFacts(t, facts)
		if len(facts) > 0 {
			if !reflect.DeepEqual(got, AcceptAnswer{}) {
				t.Fatalf("got %+v with facts, want the zero AcceptAnswer", got)
			}
			return
		}
		if got.Decision != AcceptAccept && got.Decision != AcceptReject {
			t.Fatalf("got decision %q from a valid answer", got.Decision)
		}
		b, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		again, f2 := ParseAcceptAnswer(b)
		if len(f2) > 0 || !reflect.DeepEqual(again, got) {
			t.Fatalf("round trip: got %+v %v, want %+v", again, f2, got)
		}
		checked, cf := CheckAccept(got, string(raw))
		if checked.Decision == AcceptAccept && len(cf) > 0 {
			t.Fatalf("an accept with facts %v", cf)
		}
	})
}
