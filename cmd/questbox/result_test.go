package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/planttest"
	"github.com/questbox/questbox/gates"
	"github.com/questbox/questbox/ui/api"
)

// runDemo runs the demo quest to its end in data's store, as `run --demo`
// does with the button held for its consent, and returns its id.
func runDemo(t *testing.T, data string) string {
	t.Helper()
	st, err := engine.OpenStore(data, engine.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(st, engine.Options{Providers: map[string]engine.Provider{engine.ProviderDemo: agent.Demo{}}})
	if err != nil {
		t.Fatal(err)
	}
	q, err := planttest.Demo(context.Background(), eng)
	eng.Shutdown(0)
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// checkColumns fails for every line of out wider than a terminal.
func checkColumns(t *testing.T, what, out string) {
	t.Helper()
	for l := range strings.Lines(out) {
		if w := runesWidth(strings.TrimSuffix(l, "\n")); w > textWidth {
			t.Errorf("%s: a line of %d columns:\n%s", what, w, l)
		}
	}
}

// TestQuestResultOfTheDemo: `quest result` of the demo quest after it
// finished lists its conclusions with their evidence and citations, who
// approved the one that cites nothing, and the owner's closing statement,
// in lines that fit 80 columns; --json is the API's view, and the
// quest's export agrees with it node for node. `status` of the finished
// quest counts its findings, not its statuses.
func TestQuestResultOfTheDemo(t *testing.T) {
	data := dataDir(t)
	q := runDemo(t, data)
	out := must(t, 0, "", "quest", "result", q, "--data", data).stdout
	checkColumns(t, "quest result", out)
	var v api.QuestResult
	decode(t, must(t, 0, "", "quest", "result", q, "--json", "--data", data), &v)
	if v.Counts.Conclusions != 2 || v.Ending == nil || v.Ending.Statement == "" {
		t.Fatalf("the demo's result: %+v", v)
	}
	want := []string{
		fmt.Sprintf("quest %s %q: done", q, engine.DemoName),
		"finished by the finish action of its owner " + v.Ending.Node,
		"the owner's closing statement:\n    " + agent.DemoLabel + "The demo quest on",
		"findings: 2 conclusions, 2 growing (kept), 0 dead ends",
		"CONCLUSIONS (2)", "GROWING, KEPT (2)", "DEAD ENDS (0)\n  none", "CLOSED WITHOUT A FINDING (1)",
		"gate: REVIEW, approved on the button at ",
		"REVIEW citations-present @ citations:",
		"1. " + agent.DemoCitationSource + "\n         “",
	}
	for _, f := range v.Findings {
		if f.Kind != api.FindingConclusion {
			continue
		}
		want = append(want, fmt.Sprintf("  %s: %s Team, explored\n    delivered by executer %s, accepted by accepter %s",
			f.Node, f.Team.Kind, f.Team.Executer, f.Team.Accepter))
		want = append(want, "    evidence:\n      "+strings.Fields(f.Evidence)[0]+" ")
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("quest result does not say %q:\n%s", w, out)
		}
	}

	// The export agrees: the same nodes, statuses, verdicts, evidence and
	// citations.
	exported := map[string]api.ExportRecord{}
	for line := range strings.Lines(must(t, 0, "", "export", q, "--data", data).stdout) {
		var rec api.ExportRecord
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		exported[rec.ID] = rec
	}
	for _, f := range v.Findings {
		e := exported[f.Node]
		var cs []api.Citation
		for _, c := range f.Citations {
			cs = append(cs, api.Citation{Source: c.Source, Quote: c.Quote})
		}
		if e.ID != f.Node || string(e.Status) != string(f.Status) || e.Verdict != f.Verdict || e.Evidence != f.Evidence ||
			len(cs)+len(e.Citations) > 0 && !slices.Equal(cs, e.Citations) {
			t.Errorf("finding %s (%s %s %q %v); the export has %s (%s %s %q %v)", f.Node, f.Status, f.Verdict, f.Evidence, cs,
				e.ID, e.Status, e.Verdict, e.Evidence, e.Citations)
		}
	}
	if o := exported[v.Ending.Node]; o.Summary != v.Ending.Statement {
		t.Errorf("the export's owner %s says %q, the result's closing statement %q", v.Ending.Node, o.Summary, v.Ending.Statement)
	}

	st := must(t, 0, "", "status", q, "--data", data).stdout
	findings, _, _ := strings.Cut(st[strings.Index(st, "\nfinished: ")+1:], "\nremaining: ")
	checkColumns(t, "status", findings)
	if !strings.HasPrefix(findings, "finished: 2 conclusions, 2 growing (kept), 0 dead ends\n") || strings.Contains(st, "growing 2") ||
		!strings.Contains(findings, "the findings: `questbox quest result "+q+"`") {
		t.Errorf("status of the finished demo:\n%s", st)
	}
	var sv api.Status
	decode(t, must(t, 0, "", "status", q, "--json", "--data", data), &sv)
	if sv.Findings == nil || *sv.Findings != v.Counts {
		t.Errorf("status --json findings %+v, want %+v", sv.Findings, v.Counts)
	}
}

// TestQuestResultIsCappedAndEscaped: a 256 KiB answer and an answer of
// markup and terminal escape sequences, as `quest result` prints them: no
// control character reaches the terminal (each is written as an escape),
// the evidence is its start with a note of what was cut, the citations
// the first 20, and every line fits 80 columns; --json is valid JSON.
func TestQuestResultIsCappedAndEscaped(t *testing.T) {
	data := dataDir(t)
	must(t, 0, "", "quest", "new", "ocr", "--direction", "free OCR", "--provider", "external", "--mode", "solo", "--data", data)
	must(t, 0, "", "scan", "q1", "big", "hostile", "--data", data)
	const hostile = "<script>alert(1)</script> \x1b[2J\x1b]0;pwned\x07 \u202eevil\u202c \r over \u009b31m"
	var cites []map[string]string
	for i := range 40 {
		cites = append(cites, map[string]string{"source": fmt.Sprintf("https://example.org/bench/%d/%s", i, strings.Repeat("x", 200)),
			"quote": strings.Repeat("請求書", 531)})
	}
	big, _ := json.Marshal(map[string]any{"verdict": "conclusion", "evidence": strings.Repeat("読", 20000), "citations": cites, "new_directions": []string{}})
	evil, _ := json.Marshal(map[string]any{"verdict": "conclusion", "evidence": hostile,
		"citations": []any{map[string]string{"source": "https://example.org/" + hostile, "quote": hostile}}, "new_directions": []string{}})
	if n := len(big); n < 250<<10 || n > gates.MaxAnswerBytes {
		t.Fatalf("the big answer is %d bytes, want about 256 KiB", n)
	}
	must(t, 0, string(big), "submit", "q1", "--node", "n1", "--in", "-", "--data", data)
	must(t, 0, string(evil), "submit", "q1", "--node", "n2", "--in", "-", "--data", data)

	out := must(t, 0, "", "quest", "result", "q1", "--data", data).stdout
	for _, bad := range []string{"\x1b", "\x07", "\r", "\u202e", "\u009b"} {
		if strings.Contains(out, bad) {
			t.Errorf("quest result prints %q as it is", bad)
		}
	}
	for _, w := range []string{`\x1b[2J\x1b]0;pwned\x07`, `\u202eevil\u202c`, `\x0d over`, `\u009b31m`, "<script>alert(1)</script>",
		"KiB more; `questbox export` has it all)", "and 20 more: `questbox export` has them", "” (cut)"} {
		if !strings.Contains(out, w) {
			t.Errorf("quest result does not print %q", w)
		}
	}
	checkColumns(t, "quest result", out)
	if len(out) > 64<<10 {
		t.Errorf("quest result of a 256 KiB answer prints %d bytes", len(out))
	}
	r := must(t, 0, "", "quest", "result", "q1", "--json", "--data", data)
	if !json.Valid([]byte(r.stdout)) || strings.Contains(r.stdout, "\x1b") {
		t.Errorf("quest result --json is not valid JSON, or carries a raw escape")
	}
}

// TestQuestResultWithoutFindings: a quest with nothing locked says so
// plainly; an unknown quest is a usage error naming it.
func TestQuestResultWithoutFindings(t *testing.T) {
	data := dataDir(t)
	must(t, 0, "", "quest", "new", "ocr", "--direction", "free OCR", "--provider", "external", "--data", data)
	must(t, 0, "", "scan", "q1", "tesseract jpn", "--data", data)
	out := must(t, 0, "", "quest", "result", "q1", "--data", data).stdout
	for _, w := range []string{"findings: no findings yet; nodes still open: 1", "nothing has locked with a finding yet"} {
		if !strings.Contains(out, w) {
			t.Errorf("quest result of a fresh quest does not say %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "CONCLUSIONS") {
		t.Errorf("a quest without findings lists groups:\n%s", out)
	}
	if r := must(t, exitUsage, "", "quest", "result", "q9", "--data", data); !strings.Contains(r.stderr, "q9") {
		t.Errorf("quest result q9: %q, want the quest named", r.stderr)
	}
}

func TestWrapText(t *testing.T) {
	for _, c := range []struct {
		name, text, first, cont string
		cols                    int
		want                    []string
	}{
		{"fits", "a short line", "  ", "    ", 20, []string{"  a short line"}},
		{"words", "one two three four five", "", "  ", 10, []string{"one two", "  three", "  four", "  five"}},
		{"a long word", "see https://example.org/a/very/long/path", "", "", 12,
			[]string{"see", "https://exam", "ple.org/a/ve", "ry/long/path"}},
		{"wide runes", "請求書請求書", "", "", 7, []string{"請求書", "請求書"}},
		{"empty", "", "  ", "  ", 10, []string{""}},
		{"tabs and runs of spaces", "a\tb    c", "", "", 10, []string{"a b c"}},
	} {
		got := wrapText(c.text, c.cols, c.first, c.cont)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: wrapText = %q, want %q", c.name, got, c.want)
		}
		for _, l := range got {
			if runesWidth(l) > c.cols {
				t.Errorf("%s: line %q is wider than %d", c.name, l, c.cols)
			}
		}
	}
}
