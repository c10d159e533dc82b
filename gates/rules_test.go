package gates

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

func answerJSON(a Answer) []byte {
	b, err := json.Marshal(a)
	if err != nil {
		panic(err)
	}
	return b
}

func TestContractRule(t *testing.T) {
	tests := []struct {
		name  string
		in    Input
		wants []string // Actual substrings, in order
	}{
		{"valid worker", Input{Raw: []byte(validJSON)}, nil},
		{"valid owner", Input{Raw: []byte(validOwnerJSON), Role: RoleOwner}, nil},
		{"owner answer from a worker", Input{Raw: []byte(validOwnerJSON), Role: "scout"}, []string{`unknown field "actions"`, "missing", "missing", "missing"}},
		{"truncated but parseable", Input{Raw: []byte(validJSON), Truncated: true, Cap: 65536}, []string{"output exceeded the cap of 65536 bytes"}},
		{"truncated without cap", Input{Raw: []byte(validJSON), Truncated: true}, []string{"output exceeded the provider's cap"}},
		{"truncated and broken", Input{Raw: []byte("```json\n{\"verdict\""), Truncated: true, Cap: 16}, []string{"output exceeded the cap of 16 bytes", "no closing fence"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			facts := ContractRule().Check(tt.in)
			if len(facts) != len(tt.wants) {
				t.Fatalf("got %d facts %v, want %d", len(facts), facts, len(tt.wants))
			}
			for i, w := range tt.wants {
				if !strings.Contains(facts[i].Actual, w) {
					t.Errorf("fact %d: got %q, want it to contain %q", i, facts[i].Actual, w)
				}
				if facts[i].Rule != RuleContract || facts[i].Level != Fail {
					t.Errorf("fact %d: got %s/%v, want contract/fail", i, facts[i].Rule, facts[i].Level)
				}
			}
		})
	}
}

func TestEvidenceLength(t *testing.T) {
	with := func(ev string) []byte {
		a := validAnswer
		a.Evidence = ev
		return answerJSON(a)
	}
	r := EvidenceLength(5, 10)
	tests := []struct {
		name   string
		in     Input
		actual string // "" = must not fire
	}{
		{"exact min", Input{Raw: with("12345")}, ""},
		{"exact max", Input{Raw: with("1234567890")}, ""},
		{"runes not bytes", Input{Raw: with("日本語の証拠")}, ""},
		{"trimmed before counting", Input{Raw: with("   1234   ")}, `4 characters: "1234"`},
		{"too long", Input{Raw: with("12345678901")}, "11 characters"},
		{"empty", Input{Raw: with("")}, `0 characters: ""`},
		{"owner evidence", Input{Raw: []byte(`{"evidence": "no", "actions": [{"action":"finish","summary":"s"}]}`), Role: RoleOwner}, `2 characters: "no"`},
		{"silent when contract broken", Input{Raw: []byte(`{"evidence": ""}`)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			facts := r.Check(tt.in)
			if tt.actual == "" {
				if len(facts) != 0 {
					t.Errorf("got %v, want no facts", facts)
				}
				return
			}
			if len(facts) != 1 {
				t.Fatalf("got %v, want one fact", facts)
			}
			if f := facts[0]; f.Where != "evidence" || !strings.Contains(f.Actual, tt.actual) || f.Expected != "between 5 and 10 characters" {
				t.Errorf("got %v, want evidence fact containing %q", f, tt.actual)
			}
		})
	}
	if facts := EvidenceLength(10, 5).Check(Input{Raw: []byte(validJSON)}); len(facts) != 1 {
		t.Errorf("misconfigured rule outside a catalog: got %v, want one fail-closed fact", facts)
	}
}

func TestNewDirectionsFresh(t *testing.T) {
	with := func(dirs ...string) []byte {
		a := validAnswer
		a.NewDirections = dirs
		return answerJSON(a)
	}
	tests := []struct {
		name string
		in   Input
		want []string // "where: actual substring"
	}{
		{"fresh", Input{Raw: with("try Y"), Hypothesis: "try X", Ancestors: []string{"try W"}}, nil},
		{"none", Input{Raw: with(), Hypothesis: "try X"}, nil},
		{"repeats own hypothesis", Input{Raw: with("Try  X"), Hypothesis: "try x"},
			[]string{`new_directions[0]: "Try  X" repeats this node's hypothesis`}},
		{"repeats parent with zero-width space and fullwidth letters", Input{Raw: with("ｔｒｙ\u200b W"), Hypothesis: "try X", Ancestors: []string{"try W"}},
			[]string{"new_directions[0]: " + `"ｔｒｙ\u200b W" repeats the parent's hypothesis`}},
		{"repeats grandparent", Input{Raw: with("fresh", "TRY V\n"), Ancestors: []string{"try W", "try V"}},
			[]string{"new_directions[1]: " + `repeats the hypothesis of ancestor 2 (1 = parent)`}},
		{"repeats quest direction", Input{Raw: with("Find the best OCR"), Direction: "find the best  OCR"},
			[]string{"new_directions[0]: " + `repeats the quest direction`}},
		{"repeats itself", Input{Raw: with("a", "b", "A")},
			[]string{"new_directions[2]: " + `"A" repeats new_directions[0]`}},
		{"case fold beyond ASCII", Input{Raw: with("STRASSE"), Hypothesis: "straße"},
			[]string{"new_directions[0]: " + `repeats this node's hypothesis`}},
		{"owner spawn", Input{Raw: []byte(ownerWith(`{"action":"spawn","hypothesis":"Try X","role":"poc"}`)), Role: RoleOwner, Ancestors: []string{"try x"}},
			[]string{"actions[0].hypothesis: " + `repeats the parent's hypothesis`}},
		{"silent when contract broken", Input{Raw: []byte(`{"new_directions": ["x"]}`), Hypothesis: "x"}, nil},
		{"blank hypothesis never matches", Input{Raw: with("a"), Hypothesis: "  "}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			facts := NewDirectionsFresh().Check(tt.in)
			if len(facts) != len(tt.want) {
				t.Fatalf("got %v, want %d facts", facts, len(tt.want))
			}
			for i, w := range tt.want {
				where, actual, _ := strings.Cut(w, ": ")
				if facts[i].Where != where || !strings.Contains(facts[i].Actual, actual) {
					t.Errorf("got %s: %s, want %s: …%s…", facts[i].Where, facts[i].Actual, where, actual)
				}
			}
		})
	}
}

func TestCitationsPresent(t *testing.T) {
	conclusion := validAnswer
	conclusion.Verdict = VerdictConclusion
	bare := conclusion
	bare.Citations = []Citation{}
	dead := bare
	dead.Verdict = VerdictDead
	tests := []struct {
		name string
		in   Input
		want int
	}{
		{"conclusion with citations", Input{Raw: answerJSON(conclusion)}, 0},
		{"conclusion without citations", Input{Raw: answerJSON(bare)}, 1},
		{"dead without citations", Input{Raw: answerJSON(dead)}, 0},
		{"owner", Input{Raw: []byte(validOwnerJSON), Role: RoleOwner}, 0},
		{"broken contract", Input{Raw: []byte(`{"verdict":"conclusion"}`)}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			facts := CitationsPresent().Check(tt.in)
			if len(facts) != tt.want {
				t.Fatalf("got %v, want %d facts", facts, tt.want)
			}
			if tt.want == 1 && (facts[0].Level != Review || facts[0].Where != "citations") {
				t.Errorf("got %v, want a review fact at citations", facts[0])
			}
		})
	}
}

func TestDefaultCatalog(t *testing.T) {
	c := DefaultCatalog()
	var ids []string
	for _, r := range c.Rules() {
		ids = append(ids, r.ID()+"/"+r.Level().String()+"/"+r.Stage().String())
		if r.Description() == "" {
			t.Errorf("rule %s: got empty description, want one", r.ID())
		}
	}
	want := "contract/fail/pure evidence-length/fail/pure fresh-directions/fail/pure citations-present/review/pure"
	if got := strings.Join(ids, " "); got != want {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := c.Rules()[1].(EvidenceLengthCheck); got.Min() != 20 || got.Max() != 20000 {
		t.Errorf("got %d..%d, want 20..20000", got.Min(), got.Max())
	}

	conclusion := validAnswer
	conclusion.Verdict = VerdictConclusion
	conclusion.Citations = []Citation{}
	tests := []struct {
		name  string
		in    Input
		want  Outcome
		rules []string
	}{
		{"pass", Input{Raw: []byte(validJSON), Hypothesis: "tesseract"}, OutcomePass, nil},
		{"review", Input{Raw: answerJSON(conclusion)}, OutcomeReview, []string{RuleCitationsPresent}},
		{"contract fail hides the other rules", Input{Raw: []byte("no json here")}, OutcomeFail, []string{RuleContract}},
		{"truncated", Input{Raw: []byte(validJSON), Truncated: true, Cap: 100}, OutcomeFail, []string{RuleContract}},
		{"stale direction", Input{Raw: []byte(validJSON), Hypothesis: "Try PaddleOCR on the same set"}, OutcomeFail, []string{RuleFreshDirections}},
		{"owner pass", Input{Raw: []byte(validOwnerJSON), Role: RoleOwner}, OutcomePass, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := c.Evaluate(tt.in)
			if v.Outcome != tt.want {
				t.Errorf("got %v, want %v", v, tt.want)
			}
			var got []string
			for _, f := range v.Facts {
				got = append(got, f.Rule)
			}
			if strings.Join(got, ",") != strings.Join(tt.rules, ",") {
				t.Errorf("got rules %v, want %v", got, tt.rules)
			}
		})
	}
}

func TestNormalizeText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"  Hello\t\nWorld  ", "hello world"},
		{"ＡＢＣ", "abc"},
		{"a\u200bb\u2060c\ufeff", "abc"},
		{"Straße", "strasse"},
		{"e\u0301", "é"},
		{"\u00a0x\u3000y", "x y"},
	}
	for _, tt := range tests {
		if got := NormalizeText(tt.in); got != tt.want {
			t.Errorf("NormalizeText(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}

// The literal prefilter of a regex rule never changes its facts: for
// patterns with and without a usable literal, case-folded or not, the
// rule fires exactly when the regular expression matches.
func TestRegexPrefilterAgreesWithTheRegex(t *testing.T) {
	patterns := []string{`(?i)\bguaranteed`, `(?i)\bTODO`, `91%`, `(?i)as an AI`, `(?i)\bkelvin`, `(?i)\bsure`,
		`^(promising|dead|conclusion)$`, `(?i)café`, `x+y`, `(lorem)\s+ipsum`}
	texts := []string{"", "GUARANTEED results", "it is guaranteedly", "todo: later", "We scored 91% here", "91 %",
		"As An Ai model", "\u212Aelvin scale", "ſure thing", "promising", "CAFÉ", "xxxy", "lorem  ipsum", "\xff guaranteed"}
	for _, p := range patterns {
		for _, mustMatch := range []bool{true, false} {
			r, err := Regex("raw", p, mustMatch)
			if err != nil {
				t.Fatal(err)
			}
			re := regexp.MustCompile(p)
			for _, text := range texts {
				got := len(r.Check(Input{Raw: []byte(text)})) > 0
				want := re.MatchString(text) != mustMatch
				if got != want {
					t.Errorf("pattern %q (must match %v) on %q: fired %v, want %v", p, mustMatch, text, got, want)
				}
			}
		}
	}
}
