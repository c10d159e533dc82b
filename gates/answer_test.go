package gates

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

const validJSON = `{"verdict": "promising", "evidence": "Tesseract jpn scored 91% on 40 invoices.", ` +
	`"citations": [{"source": "https://example.org/bench", "quote": "91% character accuracy"}], ` +
	`"new_directions": ["try PaddleOCR on the same set"]}`

var validAnswer = Answer{
	Verdict:       VerdictPromising,
	Evidence:      "Tesseract jpn scored 91% on 40 invoices.",
	Citations:     []Citation{{Source: "https://example.org/bench", Quote: "91% character accuracy"}},
	NewDirections: []string{"try PaddleOCR on the same set"},
}

// withField returns validJSON with one top-level member replaced (or added,
// or, with value "", removed).
func withField(name, value string) string {
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal([]byte(validJSON), &m); err != nil {
		panic(err)
	}
	if value == "" {
		delete(m, name)
	} else {
		m[name] = json.RawMessage(value)
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func fence(s string) string { return "```json\n" + s + "\n```" }

func TestParseAnswerValid(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want Answer
	}{
		{"bare object", validJSON, validAnswer},
		{"bare object with whitespace", "\n\n  " + validJSON + "  \n\t", validAnswer},
		{"bare object with BOM", "\uFEFF" + validJSON, validAnswer},
		{"fenced", fence(validJSON), validAnswer},
		{"prose before and after", "I looked into it.\n\n" + fence(validJSON) + "\n\nHope this helps!", validAnswer},
		{"last fenced block wins", fence(strings.Replace(validJSON, "promising", "dead", 1)) + "\nactually:\n" + fence(validJSON), validAnswer},
		{"CRLF line endings", strings.ReplaceAll("Answer:\n"+fence(strings.ReplaceAll(validJSON, ", ", ",\n"))+"\n", "\n", "\r\n"), validAnswer},
		{"uppercase JSON tag", "```JSON\n" + validJSON + "\n```", validAnswer},
		{"info string after json", "```json title=answer\n" + validJSON + "\n```", validAnswer},
		{"indented fence", "  ```json\n" + validJSON + "\n  ```", validAnswer},
		{"longer fence", "````json\n" + validJSON + "\n````", validAnswer},
		{"no trailing newline after fence", "x\n" + fence(validJSON), validAnswer},
		{"json fence inside another fence is ignored", fence(validJSON) + "\n````markdown\n```json\n{}\n```\n````", validAnswer},
		{"inline triple backticks are not a fence", "Use ```json {}``` like this:\n" + fence(validJSON), validAnswer},
		{"other language block after json", fence(validJSON) + "\n```python\nprint(1)\n```", validAnswer},
		{"empty lists", withField("citations", `[]`), func() Answer {
			a := validAnswer
			a.Citations = []Citation{}
			return a
		}()},
		{"empty evidence is the length rule's business", withField("evidence", `""`), func() Answer {
			a := validAnswer
			a.Evidence = ""
			return a
		}()},
		{"conclusion", withField("verdict", `"conclusion"`), func() Answer {
			a := validAnswer
			a.Verdict = VerdictConclusion
			return a
		}()},
		{"unicode escapes", withField("evidence", `"\u65e5\u672c"`), func() Answer {
			a := validAnswer
			a.Evidence = "日本"
			return a
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, facts := ParseAnswer([]byte(tt.raw))
			if len(facts) != 0 {
				t.Fatalf("got facts %v, want none", facts)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// wantFact is what a test expects of one fact: where, and substrings of
// expected and actual.
type wantFact struct{ where, expected, actual string }

func checkFacts(t *testing.T, facts []Fact, want []wantFact) {
	t.Helper()
	if len(facts) != len(want) {
		t.Fatalf("got %d facts %v, want %d", len(facts), facts, len(want))
	}
	for i, w := range want {
		f := facts[i]
		if f.Rule != RuleContract || f.Level != Fail {
			t.Errorf("fact %d: got %s/%v, want contract/fail", i, f.Rule, f.Level)
		}
		if f.Where != w.where {
			t.Errorf("fact %d where: got %v, want %v (%v)", i, f.Where, w.where, f)
		}
		if !strings.Contains(f.Expected, w.expected) {
			t.Errorf("fact %d expected: got %q, want it to contain %q", i, f.Expected, w.expected)
		}
		if !strings.Contains(f.Actual, w.actual) {
			t.Errorf("fact %d actual: got %q, want it to contain %q", i, f.Actual, w.actual)
		}
	}
}

func TestParseAnswerInvalid(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want []wantFact
	}{
		{"empty", "", []wantFact{{"answer", "```json block or a JSON object", "empty answer"}}},
		{"only whitespace", " \n\t ", []wantFact{{"answer", "JSON object", "empty answer"}}},
		{"prose only", "I think it is promising.", []wantFact{{"answer", "```json block or a JSON object", `starts "I think it is promising."`}}},
		{"untagged fence", "```\n" + validJSON + "\n```", []wantFact{{"answer", "```json block", "1 fenced block(s) without a json tag"}}},
		{"empty json block", "```json\n\n```", []wantFact{{"answer", "JSON object in the ```json block at line 1", "empty block"}}},
		{"unclosed json block", "text\n```json\n" + validJSON, []wantFact{{"answer", "opened at line 2 to be closed", "no closing fence"}}},
		{"last block unclosed after a good one", fence(validJSON) + "\n```json\n{", []wantFact{{"answer", "opened at line 4", "no closing fence"}}},
		{"invalid JSON with offset", fence(`{"verdict": "dead",, "evidence": ""}`), []wantFact{{"json", "valid JSON", "invalid character ',' looking for beginning of object key string at line 1, column 20 (byte 19)"}}},
		{"invalid JSON on line 2", "{\n  \"verdict\": dead\n}", []wantFact{{"json", "valid JSON", "line 2, column 14"}}},
		{"truncated JSON", `{"verdict": "dead", "evid`, []wantFact{{"json", "valid JSON", "unexpected end of JSON at line 1, column 26 (byte 25)"}}},
		{"newline inside a string", fence(`{"verdict": "dead", "evid`), []wantFact{{"json", "valid JSON", `invalid character '\n' in string literal at line 1, column 26`}}},
		{"trailing data", validJSON + " and more", []wantFact{{"json", "exactly one JSON value", `more data after it at line 1, column`}}},
		{"two objects", fence(validJSON + "\n" + validJSON), []wantFact{{"json", "exactly one JSON value", "line 2, column 1"}}},
		{"array in fence", fence(`[` + validJSON + `]`), []wantFact{{"json", "a JSON object", "array [{"}}},
		{"bare array", `[1, 2]`, []wantFact{{"answer", "a JSON object", "array [1,2]"}}},
		{"bare string", `"promising"`, []wantFact{{"answer", "a JSON object", `string "promising"`}}},
		{"null in fence", fence(`null`), []wantFact{{"json", "a JSON object", "null"}}},
		{"invalid UTF-8", fence("{\"verdict\": \"de\xffad\"}"), []wantFact{{"json", "valid UTF-8", "line 1, column 16 (byte 15)"}}},
		{"oversize", strings.Repeat(" ", MaxAnswerBytes) + validJSON, []wantFact{{"answer", "at most 262144 bytes", fmt.Sprintf("%d bytes", MaxAnswerBytes+len(validJSON))}}},
		{"missing verdict", withField("verdict", ""), []wantFact{{"verdict", `field "verdict" (string)`, "missing"}}},
		{"missing citations", withField("citations", ""), []wantFact{{"citations", `field "citations" (array)`, "missing"}}},
		{"missing everything", `{}`, []wantFact{
			{"verdict", `field "verdict"`, "missing"}, {"evidence", `field "evidence"`, "missing"},
			{"citations", `field "citations"`, "missing"}, {"new_directions", `field "new_directions"`, "missing"}}},
		{"verdict is a number", withField("verdict", `3`), []wantFact{{"verdict", "string", "number 3"}}},
		{"verdict is null", withField("verdict", `null`), []wantFact{{"verdict", "string", "null"}}},
		{"verdict is an object", withField("verdict", `{"v": "dead"}`), []wantFact{{"verdict", "string", `object {"v":"dead"}`}}},
		{"evidence is an array", withField("evidence", `["a"]`), []wantFact{{"evidence", "string", `array ["a"]`}}},
		{"citations is null", withField("citations", `null`), []wantFact{{"citations", "array", "null"}}},
		{"citations is a string", withField("citations", `"none"`), []wantFact{{"citations", "array", `string "none"`}}},
		{"new_directions is an object", withField("new_directions", `{}`), []wantFact{{"new_directions", "array", "object {}"}}},
		{"unknown verdict", withField("verdict", `"maybe"`), []wantFact{{"verdict", "one of promising|dead|conclusion", `"maybe"`}}},
		{"verdict wrong case", withField("verdict", `"Promising"`), []wantFact{{"verdict", "one of promising|dead|conclusion", `"Promising"`}}},
		{"verdict padded", withField("verdict", `" dead"`), []wantFact{{"verdict", "one of", `" dead"`}}},
		{"long verdict is clipped", withField("verdict", `"`+strings.Repeat("x", 500)+`"`), []wantFact{{"verdict", "one of", `"` + strings.Repeat("x", 60) + `"…`}}},
		{"unknown field", withField("confidence", `0.9`), []wantFact{{"confidence", "only the fields verdict, evidence, citations, new_directions", `unknown field "confidence"`}}},
		{"typo field", strings.Replace(validJSON, `"new_directions"`, `"new_direction"`, 1), []wantFact{
			{"new_direction", "only the fields", `unknown field "new_direction" (did you mean "new_directions"?)`},
			{"new_directions", `field "new_directions"`, "missing"}}},
		{"wrong-case field", strings.Replace(validJSON, `"verdict"`, `"Verdict"`, 1), []wantFact{
			{"Verdict", "only the fields", `(did you mean "verdict"?)`},
			{"verdict", `field "verdict"`, "missing"}}},
		{"odd field name is quoted", withField("a b\n", `1`), []wantFact{{`"a b\n"`, "only the fields", `unknown field "a b\n"`}}},
		{"duplicate verdict", strings.Replace(validJSON, `{`, `{"verdict": "conclusion", `, 1), []wantFact{{"verdict", "each field at most once", `field "verdict" repeated`}}},
		{"citation empty source", withField("citations", `[{"source": "", "quote": "q"}]`), []wantFact{{"citations[0].source", "non-blank string", `""`}}},
		{"citation blank quote", withField("citations", `[{"source": "s", "quote": "q"}, {"source": "s", "quote": "  "}]`), []wantFact{{"citations[1].quote", "non-blank string", `"  "`}}},
		{"citation missing quote", withField("citations", `[{"source": "s"}]`), []wantFact{{"citations[0].quote", `field "quote" (string)`, "missing"}}},
		{"citation unknown field", withField("citations", `[{"source": "s", "quote": "q", "url": "u"}]`), []wantFact{{"citations[0].url", "only the fields source, quote", `unknown field "url"`}}},
		{"citation quote wrong type", withField("citations", `[{"source": "s", "quote": 1}]`), []wantFact{{"citations[0].quote", "string", "number 1"}}},
		{"citation is a string", withField("citations", `["https://x"]`), []wantFact{{"citations[0]", "object", `string "https://x"`}}},
		{"citation duplicate key", withField("citations", `[{"source": "s", "quote": "q", "quote": "r"}]`), []wantFact{{"citations[0].quote", "at most once", "repeated"}}},
		{"empty new direction", withField("new_directions", `["a", ""]`), []wantFact{{"new_directions[1]", "non-blank string", `""`}}},
		{"new direction not a string", withField("new_directions", `[1]`), []wantFact{{"new_directions[0]", "string", "number 1"}}},
		{"too many new directions", withField("new_directions", `[`+strings.TrimSuffix(strings.Repeat(`"d",`, MaxListItems+1), ",")+`]`), []wantFact{{"new_directions", "at most 100 entries", "101 entries"}}},
		{"several problems at once", `{"verdict": "maybe", "evidence": 3, "citations": null, "new_directions": []}`, []wantFact{
			{"verdict", "one of", `"maybe"`}, {"evidence", "string", "number 3"}, {"citations", "array", "null"}}},
		{"many problems are capped", func() string {
			var b strings.Builder
			b.WriteString(`{"verdict": "dead", "evidence": "", "citations": [], "new_directions": []`)
			for i := 0; i < 40; i++ {
				fmt.Fprintf(&b, `, "x%d": 1`, i)
			}
			return b.String() + "}"
		}(), func() []wantFact {
			var w []wantFact
			for i := 0; i < maxFacts; i++ {
				w = append(w, wantFact{fmt.Sprintf("x%d", i), "only the fields", "unknown field"})
			}
			return append(w, wantFact{"answer", "follows the contract", "24 more problems not listed"})
		}()},
		{"deeply nested", fence(`{"verdict": ` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`), []wantFact{{"json", "valid JSON", "exceeded max depth"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, facts := ParseAnswer([]byte(tt.raw))
			checkFacts(t, facts, tt.want)
			if !reflect.DeepEqual(got, Answer{}) {
				t.Errorf("got %+v, want the zero Answer with facts", got)
			}
			for _, f := range facts {
				if s := f.String(); strings.ContainsAny(s, "\r\n") || len(s) > 600 {
					t.Errorf("fact line %q is not one short line", s)
				}
			}
		})
	}
}

func TestAnswerValidate(t *testing.T) {
	tests := []struct {
		name  string
		a     Answer
		where []string
	}{
		{"valid", validAnswer, nil},
		{"nil lists", Answer{Verdict: VerdictDead, Evidence: "e"}, []string{"citations", "new_directions"}},
		{"bad verdict", Answer{Verdict: "yes", Citations: []Citation{}, NewDirections: []string{}}, []string{"verdict"}},
		{"blank citation", Answer{Verdict: VerdictDead, Citations: []Citation{{Source: " ", Quote: "q"}}, NewDirections: []string{" "}},
			[]string{"citations[0].source", "new_directions[0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			facts := tt.a.Validate()
			var got []string
			for _, f := range facts {
				got = append(got, f.Where)
			}
			if !reflect.DeepEqual(got, tt.where) {
				t.Errorf("got %v, want %v", got, tt.where)
			}
			// Validate agrees with ParseAnswer on the marshalled answer.
			b, err := json.Marshal(tt.a)
			if err != nil {
				t.Fatal(err)
			}
			_, pf := ParseAnswer(b)
			if (len(pf) == 0) != (len(facts) == 0) {
				t.Errorf("ParseAnswer(marshal): got %v, want valid=%v", pf, len(facts) == 0)
			}
		})
	}
}

func TestClaimHash(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
	}
	for _, tt := range tests {
		if got := ClaimHash([]byte(tt.in)); got != tt.want {
			t.Errorf("ClaimHash(%q): got %v, want %v", tt.in, got, tt.want)
		}
	}
	if ClaimHash([]byte(validJSON)) == ClaimHash([]byte(validJSON+" ")) {
		t.Errorf("got equal hashes for different claims, want different")
	}
}
