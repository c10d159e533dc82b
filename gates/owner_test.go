package gates

import (
	"reflect"
	"strings"
	"testing"
)

const validOwnerJSON = `{"evidence": "n4 reproduced the benchmark; n5 repeats it.", "actions": [
  {"action":"promote","node":"n4"},
  {"action":"abort","node":"n5","reason":"duplicate of n4"},
  {"action":"spawn","hypothesis":"try X","role":"poc"},
  {"action":"finish","summary":"best answer is ..."}]}`

var validOwner = OwnerAnswer{
	Evidence: "n4 reproduced the benchmark; n5 repeats it.",
	Actions: []Action{
		{Action: ActionPromote, Node: "n4"},
		{Action: ActionAbort, Node: "n5", Reason: "duplicate of n4"},
		{Action: ActionSpawn, Hypothesis: "try X", Role: "poc"},
		{Action: ActionFinish, Summary: "best answer is ..."},
	},
}

func ownerWith(actions string) string {
	return `{"evidence": "because", "actions": [` + actions + `]}`
}

func TestParseOwnerAnswerValid(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want OwnerAnswer
	}{
		{"bare", validOwnerJSON, validOwner},
		{"fenced with prose", "Plan:\n" + fence(validOwnerJSON) + "\nDone.", validOwner},
		{"reason on promote", ownerWith(`{"action":"promote","node":"n1","reason":"best so far"}`),
			OwnerAnswer{Evidence: "because", Actions: []Action{{Action: ActionPromote, Node: "n1", Reason: "best so far"}}}},
		{"empty optional reason", ownerWith(`{"action":"promote","node":"n1","reason":""}`),
			OwnerAnswer{Evidence: "because", Actions: []Action{{Action: ActionPromote, Node: "n1"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, facts := ParseOwnerAnswer([]byte(tt.raw))
			if len(facts) != 0 {
				t.Fatalf("got facts %v, want none", facts)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseOwnerAnswerInvalid(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want []wantFact
	}{
		{"prose", "promote n4", []wantFact{{"answer", "```json block or a JSON object", `"promote n4"`}}},
		{"worker answer to an owner", validJSON, []wantFact{
			{"verdict", "only the fields evidence, actions", `unknown field "verdict"`},
			{"citations", "only the fields", `unknown field "citations"`},
			{"new_directions", "only the fields", `unknown field "new_directions"`},
			{"actions", `field "actions" (array)`, "missing"}}},
		{"no actions", ownerWith(""), []wantFact{{"actions", "at least one action", "[]"}}},
		{"actions null", `{"evidence": "e", "actions": null}`, []wantFact{{"actions", "array", "null"}}},
		{"evidence number", `{"evidence": 1, "actions": [{"action":"finish","summary":"s"}]}`, []wantFact{{"evidence", "string", "number 1"}}},
		{"unknown action", ownerWith(`{"action":"merge","node":"n1"}`), []wantFact{{"actions[0].action", "one of promote|abort|spawn|finish", `"merge"`}}},
		{"action missing", ownerWith(`{"node":"n1"}`), []wantFact{{"actions[0].action", `field "action"`, "missing"}}},
		{"action not a string", ownerWith(`{"action":1}`), []wantFact{{"actions[0].action", "string", "number 1"}}},
		{"action not an object", ownerWith(`"promote n1"`), []wantFact{{"actions[0]", "object", `string "promote n1"`}}},
		{"promote without node", ownerWith(`{"action":"promote"}`), []wantFact{{"actions[0].node", `field "node" (string) for a promote action`, "missing"}}},
		{"promote blank node", ownerWith(`{"action":"promote","node":" "}`), []wantFact{{"actions[0].node", "non-blank string", `" "`}}},
		{"abort without node", ownerWith(`{"action":"abort","reason":"r"}`), []wantFact{{"actions[0].node", `field "node"`, "missing"}}},
		{"abort without reason", ownerWith(`{"action":"abort","node":"n1"}`), []wantFact{{"actions[0].reason", `field "reason" (string) for a abort action`, "missing"}}},
		{"spawn without hypothesis", ownerWith(`{"action":"spawn","role":"poc"}`), []wantFact{{"actions[0].hypothesis", `field "hypothesis"`, "missing"}}},
		{"spawn without role", ownerWith(`{"action":"spawn","hypothesis":"h"}`), []wantFact{{"actions[0].role", `field "role"`, "missing"}}},
		{"finish without summary", ownerWith(`{"action":"finish"}`), []wantFact{{"actions[0].summary", `field "summary"`, "missing"}}},
		{"field of another action", ownerWith(`{"action":"promote","node":"n1","summary":"x"}`), []wantFact{{"actions[0].summary", "no summary for a promote action", `summary string "x"`}}},
		{"unknown action field", ownerWith(`{"action":"promote","nod":"n1"}`), []wantFact{
			{"actions[0].nod", "only the fields action, node, reason", `unknown field "nod" (did you mean "node"?)`},
			{"actions[0].node", `field "node"`, "missing"}}},
		{"node wrong type", ownerWith(`{"action":"promote","node":4}`), []wantFact{{"actions[0].node", "string", "number 4"}}},
		{"same node twice", ownerWith(`{"action":"promote","node":"n1"},{"action":"abort","node":"n1","reason":"r"}`),
			[]wantFact{{"actions[1].node", "at most once", `node "n1" already in actions[0]`}}},
		{"two finishes", ownerWith(`{"action":"finish","summary":"a"},{"action":"finish","summary":"b"}`),
			[]wantFact{{"actions[1].action", "at most one finish", "after actions[0]"}}},
		{"duplicate key in action", ownerWith(`{"action":"promote","node":"n1","node":"n2"}`), []wantFact{{"actions[0].node", "at most once", "repeated"}}},
		{"too many actions", ownerWith(strings.TrimSuffix(strings.Repeat(`{"action":"spawn","hypothesis":"h","role":"poc"},`, MaxListItems+1), ",")),
			[]wantFact{{"actions", "at most 100 entries", "101 entries"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, facts := ParseOwnerAnswer([]byte(tt.raw))
			checkFacts(t, facts, tt.want)
			if !reflect.DeepEqual(got, OwnerAnswer{}) {
				t.Errorf("got %+v, want the zero OwnerAnswer with facts", got)
			}
		})
	}
}

func TestOwnerValidate(t *testing.T) {
	tests := []struct {
		name  string
		o     OwnerAnswer
		where []string
	}{
		{"valid", validOwner, nil},
		{"no actions", OwnerAnswer{Evidence: "e"}, []string{"actions"}},
		{"misplaced field", OwnerAnswer{Actions: []Action{{Action: ActionFinish, Summary: "s", Node: "n"}}}, []string{"actions[0].node"}},
		{"unknown", OwnerAnswer{Actions: []Action{{Action: "x"}}}, []string{"actions[0].action"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, f := range tt.o.Validate() {
				got = append(got, f.Where)
			}
			if !reflect.DeepEqual(got, tt.where) {
				t.Errorf("got %v, want %v", got, tt.where)
			}
		})
	}
}
