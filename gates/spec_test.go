package gates

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestLoadCatalogErrors(t *testing.T) {
	ok := RuleSpec{ID: "c", Kind: "contract", Level: "fail"}
	tests := []struct {
		name     string
		specs    []RuleSpec
		want     error
		wantText string
	}{
		{"empty", nil, ErrEmptyCatalog, ""},
		{"empty id", []RuleSpec{{Kind: "contract", Level: "fail"}}, ErrInvalidRule, ""},
		{"duplicate id", []RuleSpec{ok, ok}, ErrDuplicateRule, `"c"`},
		{"unknown level", []RuleSpec{{ID: "x", Kind: "contract", Level: "warn"}}, ErrInvalidLevel, `"x"`},
		{"missing level", []RuleSpec{{ID: "x", Kind: "contract"}}, ErrInvalidLevel, `"x"`},
		{"unknown kind", []RuleSpec{{ID: "x", Kind: "vibes", Level: "fail"}}, ErrUnknownKind, "vibes"},
		{"unknown param", []RuleSpec{{ID: "x", Kind: "contract", Level: "fail", Params: map[string]any{"strict": true}}}, ErrInvalidConfig, "strict"},
		{"missing param", []RuleSpec{{ID: "x", Kind: "evidence-length", Level: "fail"}}, ErrInvalidConfig, "max"},
		{"wrong type", []RuleSpec{{ID: "x", Kind: "evidence-length", Level: "fail", Params: map[string]any{"max": "ten"}}}, ErrInvalidConfig, "max"},
		{"fractional integer", []RuleSpec{{ID: "x", Kind: "evidence-length", Level: "fail", Params: map[string]any{"max": 1.5}}}, ErrInvalidConfig, "max"},
		{"min over max", []RuleSpec{{ID: "x", Kind: "evidence-length", Level: "fail", Params: map[string]any{"min": int64(9), "max": int64(3)}}}, ErrInvalidConfig, `"x"`},
		{"bad regex", []RuleSpec{{ID: "x", Kind: "regex", Level: "fail", Params: map[string]any{"field": "evidence", "pattern": "("}}}, ErrInvalidConfig, "pattern"},
		{"bad field", []RuleSpec{{ID: "x", Kind: "regex", Level: "fail", Params: map[string]any{"field": "secret", "pattern": "a"}}}, ErrInvalidConfig, "field"},
		{"bad mode", []RuleSpec{{ID: "x", Kind: "regex", Level: "fail", Params: map[string]any{"field": "evidence", "pattern": "a", "mode": "maybe"}}}, ErrInvalidConfig, "mode"},
		{"program without argv", []RuleSpec{{ID: "x", Kind: "program", Level: "fail", Params: map[string]any{"expect": "exit_zero"}}}, ErrInvalidConfig, "argv"},
		{"program argv not strings", []RuleSpec{{ID: "x", Kind: "program", Level: "fail", Params: map[string]any{"argv": []any{"go", 1}, "expect": "exit_zero"}}}, ErrInvalidConfig, "argv[1]"},
		{"program contains missing", []RuleSpec{{ID: "x", Kind: "program", Level: "fail", Params: map[string]any{"argv": []any{"go"}, "expect": "stdout_contains"}}}, ErrInvalidConfig, "contains"},
		{"program bad timeout", []RuleSpec{{ID: "x", Kind: "program", Level: "fail", Params: map[string]any{"argv": []any{"go"}, "expect": "exit_zero", "timeout": "soon"}}}, ErrInvalidConfig, "timeout"},
		{"limits without a limit", []RuleSpec{{ID: "x", Kind: "limits", Level: "fail"}}, ErrInvalidConfig, "no limit"},
		{"negative dates min", []RuleSpec{{ID: "x", Kind: "dates", Level: "fail", Params: map[string]any{"min": int64(-1)}}}, ErrInvalidConfig, "min"},
		{"attack names unknown rule", []RuleSpec{{ID: "c", Kind: "contract", Level: "fail", Attacks: []string{"ghost"}}}, ErrInvalidGraph, "ghost"},
		{"supersedes names unknown rule", []RuleSpec{{ID: "c", Kind: "contract", Level: "fail", Supersedes: []string{"ghost"}}}, ErrInvalidGraph, "ghost"},
		{"bad weight", []RuleSpec{{ID: "c", Kind: "contract", Level: "fail", Weight: 2}}, ErrInvalidGraph, "weight"},
		{"ground attacks pure", []RuleSpec{ok, {ID: "u", Kind: "url-resolves", Level: "fail", Attacks: []string{"c"}}}, ErrInvalidGraph, "ground rule"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadCatalog(tt.specs)
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("got %q, want it to mention %q", err, tt.wantText)
			}
		})
	}
}

// TestLoadCatalogEveryKind loads one rule of every kind with valid params.
func TestLoadCatalogEveryKind(t *testing.T) {
	valid := map[string]map[string]any{
		RuleEvidenceLength: {"min": int64(1), "max": float64(100)},
		RuleMXResolves:     {"field": "evidence"},
		RuleProgram:        {"argv": []any{"true"}, "expect": "stdout_contains", "contains": "ok", "timeout": "500ms"},
		RuleDates:          {"field": "evidence", "min": int64(1), "not_future": false},
		RuleRegex:          {"field": "verdict", "pattern": "^(promising|dead)$", "mode": "must_match"},
		RuleLimits:         {"max_citations": int64(3), "max_new_directions": int64(2), "max_evidence_bytes": int64(1000)},
	}
	var specs []RuleSpec
	for _, k := range Kinds() {
		specs = append(specs, RuleSpec{ID: "my-" + k.Name, Kind: k.Name, Level: "review", Params: valid[k.Name]})
	}
	c, err := LoadCatalog(specs)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range c.Rules() {
		if r.ID() != specs[i].ID || r.Level() != Review {
			t.Errorf("got rule %s at level %s, want %s at review", r.ID(), r.Level(), specs[i].ID)
		}
		if r.Description() == "" {
			t.Errorf("got an empty description for %s", r.ID())
		}
	}
	if len(specs) != 11 {
		t.Errorf("got %d kinds, want 11", len(specs))
	}
}

func answerWith(evidence string, cites []Citation, dirs []string) []byte {
	if cites == nil {
		cites = []Citation{}
	}
	if dirs == nil {
		dirs = []string{}
	}
	return answerJSON(Answer{Verdict: VerdictPromising, Evidence: evidence, Citations: cites, NewDirections: dirs})
}

func TestCitationQuote(t *testing.T) {
	const url = "https://example.org/bench"
	source := "<html><body><p>Tesseract&nbsp;scored <b>91%</b> on forty   invoices.</p><script>var hidden = 'secret quote';</script>" +
		"<p>pa\u200bss\u00adword reset</p></body></html>"
	tests := []struct {
		name      string
		quote     string
		src       string
		docs      map[string]string
		obs       *Observation
		wantFire  bool
		wantWhere string
	}{
		{"exact", "Tesseract scored 91% on forty invoices", url, nil, nil, false, ""},
		{"extra spaces and case", "  tesseract   SCORED 91%  ", url, nil, nil, false, ""},
		{"NFKC width variants", "Ｔｅｓｓｅｒａｃｔ scored ９１％", url, nil, nil, false, ""},
		{"zero-width only in the source", "password reset", url, nil, nil, false, ""},
		{"zero-width in both at the same place", "pa\u200bss", url, nil, nil, false, ""},
		{"absent quote", "Tesseract scored 99%", url, nil, nil, true, "citations[0].quote"},
		{"zero-width trick in the quote", "Tess\u200eeract scored", url, nil, nil, true, "citations[0].quote"},
		{"zero-width word joiner in the quote", "forty\u2060 invoices", url, nil, nil, true, "citations[0].quote"},
		{"script text is not page text", "secret quote", url, nil, nil, true, "citations[0].quote"},
		{"404 source", "Tesseract", url, nil, &Observation{Status: 404}, true, "citations[0].source"},
		{"fetch error", "Tesseract", url, nil, &Observation{Err: "too many redirects"}, true, "citations[0].source"},
		{"known document", "line two", "notes.md", map[string]string{"notes.md": "line one\nline   two"}, nil, false, ""},
		{"unknown document", "line two", "notes.md", nil, nil, true, "citations[0].source"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := Input{Raw: answerWith("e", []Citation{{Source: tt.src, Quote: tt.quote}}, nil), Sources: tt.docs}
			obs := Observation{Status: 200, Body: source}
			if tt.obs != nil {
				obs = *tt.obs
			}
			in.Ground = GroundFacts{Request{Kind: ReqFetchURL, Target: url}.Key(): obs}
			facts := CitationQuote().Check(in)
			if (len(facts) > 0) != tt.wantFire {
				t.Fatalf("got %v, want fire=%v", facts, tt.wantFire)
			}
			if tt.wantFire && facts[0].Where != tt.wantWhere {
				t.Errorf("got where %q, want %q", facts[0].Where, tt.wantWhere)
			}
			if tt.wantFire && tt.wantWhere == "citations[0].quote" && !strings.Contains(facts[0].Actual, strings.TrimSpace(tt.quote[:4])) {
				t.Errorf("got actual %q, want it to name the quote", facts[0].Actual)
			}
		})
	}
}

// TestCitationQuoteThroughCatalog: the acceptance case end to end, with a
// missing observation failing closed.
func TestCitationQuoteThroughCatalog(t *testing.T) {
	c, err := LoadCatalog([]RuleSpec{{ID: "contract", Kind: "contract", Level: "fail"}, {ID: "quotes", Kind: "citation-quote", Level: "fail"}})
	if err != nil {
		t.Fatal(err)
	}
	in := Input{Raw: answerWith("e", []Citation{{Source: "https://a.example/", Quote: "not there"}}, nil)}
	in.Ground = GroundFacts{Request{Kind: ReqFetchURL, Target: "https://a.example/"}.Key(): {Status: 200, Body: "something else"}}
	v := c.Evaluate(in)
	if v.Outcome != OutcomeFail || len(v.Facts) != 1 || v.Facts[0].Rule != "quotes" || !strings.Contains(v.Facts[0].Actual, `"not there"`) {
		t.Errorf("got %v, want one FAIL fact of quotes naming the quote", v)
	}
	in.Ground = nil
	if v := c.Evaluate(in); v.Outcome != OutcomeFail || v.Facts[0].Where != "citations[0].source" {
		t.Errorf("got %v, want FAIL for a missing observation", v)
	}
}

func TestURLResolvesAndMX(t *testing.T) {
	raw := answerWith("write to ops@mail.example or root@nomx.example.", []Citation{{Source: "https://up.example/", Quote: "q"}, {Source: "https://down.example/", Quote: "q"}, {Source: "notes", Quote: "q"}}, nil)
	in := Input{Raw: raw, Ground: GroundFacts{
		Request{Kind: ReqFetchURL, Target: "https://up.example/"}.Key():   {Status: 200},
		Request{Kind: ReqFetchURL, Target: "https://down.example/"}.Key(): {Status: 503},
		Request{Kind: ReqLookupMX, Target: "mail.example"}.Key():          {MX: []string{"mx.mail.example"}},
		Request{Kind: ReqLookupMX, Target: "nomx.example"}.Key():          {},
	}}
	tests := []struct {
		name      string
		rule      GroundRule
		wantNeeds int
		wantWhere []string
	}{
		{"url-resolves", URLResolves(), 2, []string{"citations[1].source"}},
		{"mx-resolves", MXResolves("evidence"), 2, []string{"evidence"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := len(tt.rule.Needs(in)); got != tt.wantNeeds {
				t.Errorf("got %d needs, want %d", got, tt.wantNeeds)
			}
			var where []string
			for _, f := range tt.rule.Check(in) {
				where = append(where, f.Where)
			}
			if !slices.Equal(where, tt.wantWhere) {
				t.Errorf("got facts at %v, want %v", where, tt.wantWhere)
			}
		})
	}
}

func TestProgramRule(t *testing.T) {
	raw := []byte(validJSON)
	tests := []struct {
		name   string
		expect string
		obs    Observation
		want   bool
	}{
		{"exit zero ok", ExpectExitZero, Observation{ExitCode: 0}, false},
		{"exit zero failed", ExpectExitZero, Observation{ExitCode: 2, Stdout: "boom"}, true},
		{"exit nonzero ok", ExpectExitNonzero, Observation{ExitCode: 1}, false},
		{"exit nonzero failed", ExpectExitNonzero, Observation{ExitCode: 0}, true},
		{"stdout contains", ExpectStdoutContains, Observation{Stdout: "all OK here"}, false},
		{"stdout lacks", ExpectStdoutContains, Observation{Stdout: "nope"}, true},
		{"timed out", ExpectExitZero, Observation{TimedOut: true, ExitCode: -1}, true},
		{"could not start", ExpectExitZero, Observation{Err: "not found"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Program([]string{"check"}, tt.expect, "OK", 1000)
			if err != nil {
				t.Fatal(err)
			}
			req := r.Needs(Input{Raw: raw})[0]
			if req.Kind != ReqRun || req.Stdin != validJSON || req.TimeoutMillis != 1000 {
				t.Fatalf("got request %+v, want a run with the answer on stdin", req)
			}
			in := Input{Raw: raw, Ground: GroundFacts{req.Key(): tt.obs}}
			if got := len(r.Check(in)) > 0; got != tt.want {
				t.Errorf("got fire=%v, want %v", got, tt.want)
			}
		})
	}
}

func TestRegexLimitsDates(t *testing.T) {
	mustRegex := func(field, pat string, must bool) Rule {
		r, err := Regex(field, pat, must)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	cites := []Citation{{Source: "a", Quote: "q"}, {Source: "b", Quote: "q"}}
	tests := []struct {
		name      string
		rule      Rule
		raw       []byte
		today     string
		wantWhere []string
	}{
		{"regex must match ok", mustRegex("evidence", `\d+%`, true), answerWith("scored 91%", nil, nil), "", nil},
		{"regex must match fails", mustRegex("evidence", `\d+%`, true), answerWith("scored well", nil, nil), "", []string{"evidence"}},
		{"regex must not match", mustRegex("citations.quote", `(?i)lorem`, false), answerWith("e", []Citation{{Source: "s", Quote: "Lorem ipsum"}}, nil), "", []string{"citations[0].quote"}},
		{"regex silent on a broken contract", mustRegex("evidence", `x`, true), []byte("nope"), "", nil},
		{"limits ok", Limits(2, 1, 100), answerWith("short", cites, []string{"d"}), "", nil},
		{"limits exceeded", Limits(1, 1, 3), answerWith("too long", cites, []string{"a", "b"}), "", []string{"citations", "new_directions", "evidence"}},
		{"dates ok", Dates("evidence", 1, true), answerWith("released 2026-11-30 and 1 Dec 2026", nil, nil), "2026-12-02", nil},
		{"date in the future", Dates("evidence", 0, true), answerWith("released December 3, 2026", nil, nil), "2026-12-02", []string{"evidence"}},
		{"impossible date", Dates("evidence", 0, false), answerWith("on 2026-02-30", nil, nil), "", []string{"evidence"}},
		{"too few dates", Dates("evidence", 1, false), answerWith("no dates", nil, nil), "", []string{"evidence"}},
		{"japanese era date", Dates("evidence", 1, true), answerWith("令和8年12月2日に公開", nil, nil), "2026-12-02", nil},
		{"no reference date", Dates("evidence", 0, true), answerWith("2026-01-01", nil, nil), "", []string{"input"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var where []string
			for _, f := range tt.rule.Check(Input{Raw: tt.raw, Today: tt.today}) {
				where = append(where, f.Where)
			}
			if !slices.Equal(where, tt.wantWhere) {
				t.Errorf("got facts at %v, want %v", where, tt.wantWhere)
			}
		})
	}
}
