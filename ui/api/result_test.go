package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/findings"
	"github.com/questbox/questbox/engine/planttest"
	"github.com/questbox/questbox/gates"
)

// fixtureResult is a finished v3.2 quest's result: a Team's conclusion
// approved on the button after a REVIEW, a worker's conclusion the gate
// passed, a growing Team, a dead end, and a node closed without a
// finding.
func fixtureResult() *engine.Result {
	q := fixtureQuest()
	q.Status, q.Reason, q.Teams, q.MaxRevisions, q.AcceptMode = engine.QuestDone, engine.ReasonOwnerFinished+"the demo found its answer", true, 2, "judge"
	q.Counts = domain.CountsOf(map[engine.Status]int{engine.Explored: 9, engine.Growing: 1, engine.Aborted: 1, engine.Exhausted: 1})
	review := []gates.Fact{{Rule: "citations-present", Level: gates.Review, Where: "citations", Expected: "at least one citation for a conclusion", Actual: "none"}}
	team := &engine.Node{ID: "n7", Quest: "q1", Parent: "n1", Role: "poc", TeamKind: "poc", Hypothesis: "reproduce it in a small experiment",
		Status: engine.Explored, Verdict: "conclusion", Evidence: "the experiment reproduced the claim", RevisionCount: 1, Updated: t0}
	exec := &engine.Node{ID: "n20", Role: engine.RoleExecuter, Team: "n7", Stage: engine.StageExec, Outcome: "REVIEW", Facts: review}
	acc := &engine.Node{ID: "n22", Parent: "n20", Role: engine.RoleAccepter, Team: "n7", Stage: engine.StageAccept, Verdict: "accept"}
	worker := &engine.Node{ID: "n3", Quest: "q1", Parent: "n1", Role: "scout", Hypothesis: "tesseract jpn", Status: engine.Explored,
		Verdict: "conclusion", Evidence: "tesseract reads every sample", Outcome: "PASS",
		Citations: []gates.Citation{{Source: "https://example.org/bench", Quote: "98.1% on invoices"}}, Updated: t0.Add(time.Minute)}
	grow := &engine.Node{ID: "n8", Quest: "q1", Parent: "n1", Role: "poc", TeamKind: "poc", Hypothesis: "trace it to a source",
		Status: engine.Growing, Verdict: "promising", Evidence: "the source holds up", Updated: t0.Add(2 * time.Minute)}
	dead := &engine.Node{ID: "n4", Quest: "q1", Parent: "n1", Role: "scout", Hypothesis: "paddle", Status: engine.Aborted,
		Verdict: "dead", Evidence: "paddle cannot read vertical text", Outcome: "PASS", Updated: t0.Add(3 * time.Minute)}
	return &engine.Result{Quest: q,
		Findings: []engine.Finding{
			{Kind: engine.FindingConclusion, Node: team, Executer: exec, Accepter: acc, Gate: "REVIEW", Review: review,
				Approval: &engine.Approval{Node: "n22", Via: "button", At: t0.Add(30 * time.Second)}},
			{Kind: engine.FindingConclusion, Node: worker, Gate: "PASS"},
			{Kind: engine.FindingGrowing, Node: grow, Gate: "PASS"},
			{Kind: engine.FindingDeadEnd, Node: dead, Gate: "PASS"},
		},
		Closed: []*engine.Node{{ID: "n9", Role: "poc", Status: engine.Exhausted, Hypothesis: "easyocr", Reason: "FAIL 3 times (max_tries 3)"}},
		Ending: engine.Ending{How: engine.EndedByFinish, Reason: q.Reason, Node: "n34", Statement: "The demo found its answer: tesseract."}}
}

func TestGoldenResult(t *testing.T) {
	r := fixtureResult()
	golden(t, "result", ResultView(r))
	st := StatusView(r.Quest)
	c := findingCounts(r)
	st.Findings = &c
	golden(t, "status_finished", st)
	if got, want := c.String(), "2 conclusions, 1 growing (kept), 1 dead end"; got != want {
		t.Errorf("headline %q, want %q", got, want)
	}
	checkOwnTypes(t, reflectType(QuestResult{}), map[string]bool{})
	empty := ResultView(&engine.Result{Quest: fixtureQuest()})
	if empty.Headline != "no findings yet" || empty.Ending != nil || empty.Findings == nil || empty.Closed == nil {
		t.Errorf("an active quest without findings: %+v", empty)
	}
}

// An approval says who approved, in words every face shows.
func TestApprovalText(t *testing.T) {
	for via, want := range map[string]string{
		"button": "approved on the button", "dashboard:alice": "approved on the dashboard by alice",
		"mqtt": "approved over MQTT", "carrier pigeon": "approved via carrier pigeon",
	} {
		if got := approvalText(via); got != want {
			t.Errorf("approvalText(%q) = %q, want %q", via, got, want)
		}
	}
}

// serveEngine is the API over a fresh engine with the demo provider.
func serveEngine(t *testing.T) (*engine.Engine, *Server) {
	t.Helper()
	st, err := engine.OpenStore(t.TempDir(), engine.StoreOptions{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(st, engine.Options{Providers: map[string]engine.Provider{engine.ProviderDemo: agent.Demo{}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		eng.Shutdown(0)
		if _, err := eng.Verify(); err != nil {
			t.Errorf("verify: %v", err)
		}
		st.Close()
	})
	return eng, New(Options{Engines: Only(eng)})
}

func getBody(t *testing.T, srv *Server, path string) []byte {
	t.Helper()
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequestWithContext(context.Background(), http.MethodGet, path, nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
	}
	return rec.Body.Bytes()
}

// hostileAnswer is evidence that tries to be markup and to drive a terminal.
const hostileAnswer = "<script>alert(1)</script><img src=x onerror=alert(2)> \x1b[2J\x1b]0;pwned\x07 \u202eevil\u202c \r over"

// workerAnswer is a worker's conclusion as an agent writes it.
func workerAnswer(t *testing.T, evidence string, cites []gates.Citation) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"verdict": "conclusion", "evidence": evidence, "citations": cites, "new_directions": []string{}})
	if err != nil {
		t.Fatal(err)
	}
	return []byte("```json\n" + string(b) + "\n```\n")
}

// A 256 KiB answer (the gate's evidence-length allows 20000 characters,
// 59 KiB of them here, and the rest is 40 citations of long quotes) and
// an answer of markup and escape sequences: the result is valid JSON
// with no raw control byte and no markup in it; the evidence is its start
// within EvidenceCap with a note of what was cut, the citations the first
// CitationsCap, each quote within its cap; and the text, decoded, is the
// agent's, unchanged.
func TestResultCapsAndKeepsTextInert(t *testing.T) {
	eng, srv := serveEngine(t)
	s := eng.NewQuestSpec("caps", "free OCR")
	s.Provider, s.Mode = engine.ProviderExternal, engine.ModeSolo
	q, err := eng.NewQuest(s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Scan(q.ID, []string{"big", "hostile"}); err != nil {
		t.Fatal(err)
	}
	evidence := strings.Repeat("請求書を読む", 20000/6) + "ok" // 20000 characters
	var cites []gates.Citation
	for i := range 40 {
		cites = append(cites, gates.Citation{Source: fmt.Sprintf("https://example.org/bench/%d", i), Quote: strings.Repeat("q", 4900)})
	}
	big := workerAnswer(t, evidence, cites)
	if len(big) < 250<<10 || len(big) > gates.MaxAnswerBytes {
		t.Fatalf("the answer is %d bytes, want about 256 KiB", len(big))
	}
	evil := workerAnswer(t, hostileAnswer, []gates.Citation{{Source: "https://example.org/<b>" + hostileAnswer, Quote: hostileAnswer}})
	for i, answer := range [][]byte{big, evil} {
		node := fmt.Sprintf("n%d", i+1)
		res, err := eng.Submit(context.Background(), q.ID, node, answer)
		if err != nil || !engine.Status(res.Status).Terminal() {
			t.Fatalf("submit %s: %+v, %v", node, res, err)
		}
	}

	body := getBody(t, srv, "/api/quests/"+q.ID+"/result")
	if !json.Valid(body) {
		t.Fatal("the result is not valid JSON")
	}
	for _, bad := range []string{"\x1b", "\x07", "\r", "<script", "<img"} {
		if bytes.Contains(body, []byte(bad)) {
			t.Errorf("the result's JSON carries %q as it is", bad)
		}
	}
	if len(body) > 64<<10 {
		t.Errorf("the result of a 256 KiB answer is %d bytes", len(body))
	}
	var v QuestResult
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Findings) != 2 || v.Findings[0].Node != "n1" || v.Findings[1].Node != "n2" {
		t.Fatalf("%d findings, want n1 and n2 in lock order", len(v.Findings))
	}
	f := v.Findings[0]
	want, cut := Clip(evidence, EvidenceCap)
	if f.Node != "n1" || f.Evidence != want || len(f.Evidence) > EvidenceCap || f.EvidenceBytes != len(evidence) {
		t.Errorf("n1's evidence: %d bytes of %d (%s), want the first %d", len(f.Evidence), f.EvidenceBytes, f.Node, len(want))
	}
	if wantNote := fmt.Sprintf("(cut: %d KiB more; `questbox export` has it all)", (cut+1023)/1024); f.EvidenceCut != wantNote || cut < 50<<10 {
		t.Errorf("n1's note %q, want %q", f.EvidenceCut, wantNote)
	}
	if len(f.Citations) != CitationsCap || f.CitationsMore != 40-CitationsCap {
		t.Errorf("n1 shows %d citations and %d more, want %d and %d", len(f.Citations), f.CitationsMore, CitationsCap, 40-CitationsCap)
	}
	if c := f.Citations[0]; len(c.Quote) != HypothesisCap || c.Cut != 4900-HypothesisCap || c.Source != cites[0].Source {
		t.Errorf("n1's first citation: %d bytes of quote, %d cut, source %q", len(c.Quote), c.Cut, c.Source)
	}
	h := v.Findings[1]
	if h.Evidence != Printable(hostileAnswer, true) || h.EvidenceCut != "" || len(h.Citations) != 1 || h.Citations[0].Quote != Printable(hostileAnswer, true) ||
		!strings.HasSuffix(h.Citations[0].Source, Printable(hostileAnswer, false)) {
		t.Errorf("the hostileAnswer answer (%s) does not read as its printable text: %q, %+v", h.Node, h.Evidence, h.Citations)
	}
	for _, s := range []string{h.Evidence, h.Citations[0].Quote, h.Citations[0].Source} {
		if strings.ContainsFunc(s, func(r rune) bool { return r != '\n' && r != '\t' && escaped(r, true) }) {
			t.Errorf("the result carries a control character: %q", s)
		}
	}
	if !strings.Contains(h.Evidence, `\x1b[2J`) || !strings.Contains(h.Evidence, "<script>") {
		t.Errorf("the hostileAnswer evidence reads %q; want its escape sequence and its markup shown as text", h.Evidence)
	}
}

func TestClipAndCutNote(t *testing.T) {
	for _, c := range []struct {
		s     string
		limit int
		want  string
		cut   int
	}{
		{"short", 10, "short", 0},
		{"exactly", 7, "exactly", 0},
		{"abcdef", 3, "abc", 3},
		{"日本語", 4, "日", 6}, // never half a rune
		{"ab\xffcd", 10, "ab\xffcd", 0},
		{"", 0, "", 0},
	} {
		got, cut := Clip(c.s, c.limit)
		if got != c.want || cut != c.cut {
			t.Errorf("Clip(%q, %d) = %q, %d; want %q, %d", c.s, c.limit, got, cut, c.want, c.cut)
		}
	}
	for cut, want := range map[int]string{0: "", 300: "(cut: 300 bytes more; `questbox export` has it all)",
		1024: "(cut: 1 KiB more; `questbox export` has it all)", 252<<10 + 1: "(cut: 253 KiB more; `questbox export` has it all)"} {
		if got := CutNote(cut); got != want {
			t.Errorf("CutNote(%d) = %q, want %q", cut, got, want)
		}
	}
}

// Printable escapes every character that could drive a terminal or hide
// or reorder text, keeping lines (and tabs) only when asked to.
func TestTextPrintable(t *testing.T) {
	for _, tc := range []struct {
		in, lines, line string
	}{
		{"plain text, 日本語 ✓", "plain text, 日本語 ✓", "plain text, 日本語 ✓"},
		{"a\nb\tc", "a\nb\tc", `a\x0ab\x09c`},
		{"\x1b[31mred\x1b[0m\a", `\x1b[31mred\x1b[0m\x07`, `\x1b[31mred\x1b[0m\x07`},
		{"cr\r del\x7f", `cr\x0d del\x7f`, `cr\x0d del\x7f`},
		{"c1 \u009b2J", `c1 \u009b2J`, `c1 \u009b2J`},
		{"\u202egnp.exe\u202c \u2066i\u2069 \u061c", `\u202egnp.exe\u202c \u2066i\u2069 \u061c`, `\u202egnp.exe\u202c \u2066i\u2069 \u061c`},
		{"zero\u200bwidth\u2060\ufeff", `zero\u200bwidth\u2060\ufeff`, `zero\u200bwidth\u2060\ufeff`},
		{"line\u2028para\u2029", `line\u2028para\u2029`, `line\u2028para\u2029`},
		{"bad \xff byte", `bad \xff byte`, `bad \xff byte`},
		{"<b>&amp;</b>", "<b>&amp;</b>", "<b>&amp;</b>"}, // inert on a terminal; the page shows it as text
	} {
		if got := Printable(tc.in, true); got != tc.lines {
			t.Errorf("Printable(%q, lines) = %q, want %q", tc.in, got, tc.lines)
		}
		if got := Printable(tc.in, false); got != tc.line {
			t.Errorf("Printable(%q, one line) = %q, want %q", tc.in, got, tc.line)
		}
		if got := Printable(tc.lines, true); got != tc.lines {
			t.Errorf("printable is not idempotent on %q: %q", tc.lines, got)
		}
	}
}

// The demo quest, run to its end with the button held for its consent:
// the result lists its conclusions with their evidence and citations, and
// an export of the quest agrees with it node for node (ids, statuses,
// verdicts, evidence, citations); the owner's closing statement is the
// summary the export carries on the owner.
func TestResultAndExportOfTheDemoAgree(t *testing.T) {
	eng, srv := serveEngine(t)
	q, err := planttest.Demo(context.Background(), eng)
	if err != nil {
		t.Fatal(err)
	}
	hc, stop := InProcess(srv)
	defer stop()
	c := NewClient(hc, "in-process")
	ctx := context.Background()
	r, err := c.Result(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := c.ExportTo(ctx, q, &out); err != nil {
		t.Fatal(err)
	}
	exported := map[string]ExportRecord{}
	for line := range strings.Lines(out.String()) {
		var rec ExportRecord
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		exported[rec.ID] = rec
	}

	if !r.Finished || r.Ending == nil || r.Ending.How != string(engine.EndedByFinish) || r.Counts.Conclusions < 2 {
		t.Fatalf("the demo's result: finished %v, ending %+v, counts %+v", r.Finished, r.Ending, r.Counts)
	}
	if o, ok := exported[r.Ending.Node]; !ok || o.Summary == "" || o.Summary != r.Ending.Statement {
		t.Errorf("closing statement %q; the export's owner %s says %q", r.Ending.Statement, r.Ending.Node, o.Summary)
	}
	cited := false
	for _, f := range r.Findings {
		e, ok := exported[f.Node]
		if !ok {
			t.Errorf("finding %s is not in the export", f.Node)
			continue
		}
		if string(e.Status) != string(f.Status) || e.Verdict != f.Verdict || e.Evidence != f.Evidence || f.EvidenceCut != "" {
			t.Errorf("finding %s: %s %s %q; the export says %s %s %q", f.Node, f.Status, f.Verdict, f.Evidence, e.Status, e.Verdict, e.Evidence)
		}
		var cs []Citation
		for _, rc := range f.Citations {
			cs = append(cs, Citation{Source: rc.Source, Quote: rc.Quote})
		}
		if !slices.Equal(cs, e.Citations) && len(cs)+len(e.Citations) > 0 {
			t.Errorf("finding %s cites %v; the export %v", f.Node, cs, e.Citations)
		}
		if f.Kind == FindingConclusion && f.Evidence == "" {
			t.Errorf("conclusion %s has no evidence", f.Node)
		}
		cited = cited || f.Kind == FindingConclusion && len(f.Citations) > 0 && f.Citations[0].Source == agent.DemoCitationSource
	}
	if !cited {
		t.Errorf("no conclusion of the demo cites %s: %+v", agent.DemoCitationSource, r.Findings)
	}
	// Every exported node the rule calls a finding is in the result.
	nodes, err := eng.Nodes(q)
	if err != nil {
		t.Fatal(err)
	}
	in := map[string]bool{}
	for _, f := range r.Findings {
		in[f.Node] = true
	}
	for _, n := range nodes {
		if _, ok := findings.FindingOf(n); ok && !in[n.ID] {
			t.Errorf("node %s (%s, %s) is a finding the result leaves out", n.ID, n.Status, n.Verdict)
		}
		if _, ok := exported[n.ID]; n.Status.Terminal() != ok {
			t.Errorf("node %s (%s): exported %v", n.ID, n.Status, ok)
		}
	}
	st, err := c.Status(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if st.Findings == nil || *st.Findings != r.Counts {
		t.Errorf("status of the finished demo counts findings %+v, want the result's %+v", st.Findings, r.Counts)
	}
}
