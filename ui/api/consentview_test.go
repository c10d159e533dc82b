package api

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/gates"
	"github.com/questbox/questbox/gates/judge"
)

// hostile is agent text that tries every trick on the faces that show
// it: HTML, a terminal's CSI and OSC 8 sequences, a bell, a carriage
// return, a C1 CSI, the controls of bidirectional text, bytes that are not
// UTF-8.
const hostile = "<script>alert(1)</script><b>bold</b> \x1b[31mred\x1b[0m \x1b]8;;https://evil.example/\x07link\x1b]8;;\x07 bell\x07 cr\rover \u009b2J \u202eevil\u202c \xff\xfe end"

var citationsPresent = gates.Fact{Rule: gates.RuleCitationsPresent, Level: gates.Review, Where: "citations",
	Expected: "at least one citation for a conclusion", Actual: "none"}

// TestGoldenConsentViews pins the JSON of a request of each reason kind,
// the one every face shows.
func TestGoldenConsentViews(t *testing.T) {
	now := t0.Add(90 * time.Second)
	deadline := t0.Add(24 * time.Hour)
	doubt := judge.Result{Effect: judge.Doubt, Reason: "the quote does not say 38 of 40", Judge: "haiku"}.Fact()
	for _, tc := range []struct {
		name string
		r    engine.ConsentRequest
	}{
		{"consent_rule", engine.ConsentRequest{Node: "n4", Quest: "q1", Role: "scout", Hypothesis: "tesseract jpn reads receipts",
			ClaimHash: strings.Repeat("c0", 32), Why: "the gate asks for review", Since: t0, Deadline: deadline,
			Reasons:     []engine.ConsentReason{{Kind: engine.ReasonRule, Text: citationsPresent.String(), Fact: &citationsPresent}},
			Deliverable: engine.Deliverable{Node: "n4", Verdict: "conclusion", Evidence: "tesseract read 38 of 40 receipts."}}},
		{"consent_judge", engine.ConsentRequest{Node: "n5", Quest: "q1", Role: "scout", Hypothesis: "paddle reads receipts",
			ClaimHash: strings.Repeat("d1", 32), Why: "the L2 judge raised doubt", Since: t0,
			Reasons: []engine.ConsentReason{{Kind: engine.ReasonJudge, Text: doubt.String(), Fact: &doubt, Source: "https://example.org/bench", Quote: "38 of 40"}},
			Deliverable: engine.Deliverable{Node: "n5", Verdict: "conclusion", Evidence: "paddle read 38 of 40 receipts.",
				Citations: []gates.Citation{{Source: "https://example.org/bench", Quote: "38 of 40"}}}}},
		{"consent_checkpoint", engine.ConsentRequest{Node: "n6", Quest: "q1", Role: "poc", Hypothesis: "run paddle on the invoices",
			ClaimHash: strings.Repeat("e2", 32), Why: "role poc is a human checkpoint", Since: t0, Deadline: deadline,
			Reasons:     []engine.ConsentReason{{Kind: engine.ReasonCheckpoint, Text: "checkpoint of role poc", Role: "poc"}},
			Deliverable: engine.Deliverable{Node: "n6", Verdict: "promising", Evidence: "paddle ran on 20 invoices."}}},
		{"consent_team_accept", engine.ConsentRequest{Node: "n9", Quest: "q1", Role: engine.RoleAccepter, Team: "n7", Stage: engine.StageAccept,
			Hypothesis: "accept stage of Team n7 (scout), revision 1: survey free OCR engines", ClaimHash: strings.Repeat("f3", 32),
			Why: "the accept of Team n7 waits for the button", Since: t0, Deadline: t0.Add(time.Minute), Expired: true,
			Reasons: []engine.ConsentReason{
				{Kind: engine.ReasonTeamAccept, Text: "human accept of Team n7 (the deliverable's L1 gate asks for review); the accepter says: it compares both engines", Team: "n7"},
				{Kind: engine.ReasonRule, Text: citationsPresent.String(), Fact: &citationsPresent}},
			Deliverable: engine.Deliverable{Node: "n8", Verdict: "conclusion", Evidence: "engine A read 38 of 40, engine B 31 of 40."}}},
		// Every face shows a reason by its text, whatever its kind.
		{"consent_egress", engine.ConsentRequest{Node: "n3", Quest: "q2", Role: engine.RoleEgress,
			Hypothesis: "Egress consent: may quest q2 send its material to anthropic?", ClaimHash: strings.Repeat("a4", 32),
			Why: "quest q2 would send its material to vendor anthropic (egress)", Since: t0,
			Reasons:     []engine.ConsentReason{{Kind: engine.ReasonEgress, Text: "quest q2 would send its material to vendor anthropic (egress)"}},
			Deliverable: engine.Deliverable{Node: "n3", Evidence: `Quest q2 "ocr" may send its material (its direction, its nodes' prompts and answers, the sources they cite) to anthropic, as its egress (local,anthropic) allows.`}}},
	} {
		golden(t, tc.name, ConsentView(tc.r, now))
	}
}

// TestConsentViewCapsAndEscapes: a 256 KiB evidence full of escapes
// reaches the view as its last 4 KiB, marked cut, with no character left
// that drives a terminal or reorders a line; every field is so.
func TestConsentViewCapsAndEscapes(t *testing.T) {
	evidence := strings.Repeat(hostile+"\n", (gates.MaxAnswerBytes/len(hostile))+1) + "THE END"
	r := engine.ConsentRequest{Node: "n1", Quest: "q1", Role: "scout", Hypothesis: hostile, ClaimHash: strings.Repeat("0", 64), Since: t0,
		Reasons: []engine.ConsentReason{{Kind: engine.ReasonJudge, Text: hostile, Source: hostile, Quote: strings.Repeat(hostile, 100)}},
		Deliverable: engine.Deliverable{Node: "n1", Verdict: "conclusion", Evidence: evidence,
			Citations: make([]gates.Citation, MaxConsentCitations+3)}}
	for i := range r.Deliverable.Citations {
		r.Deliverable.Citations[i] = gates.Citation{Source: hostile, Quote: strings.Repeat(hostile, 100)}
	}
	v := ConsentView(r, t0)
	d := v.Deliverable
	if !d.EvidenceCut || d.EvidenceBytes != len(evidence) || !strings.HasSuffix(d.Evidence, "THE END") {
		t.Errorf("evidence cut %v, %d bytes (want %d), ends %q; want its end, marked cut", d.EvidenceCut, d.EvidenceBytes, len(evidence), d.Evidence[max(0, len(d.Evidence)-20):])
	}
	if len(d.Citations) != MaxConsentCitations || d.CitationsMore != 3 {
		t.Errorf("%d citations and %d more, want %d and 3", len(d.Citations), d.CitationsMore, MaxConsentCitations)
	}
	raw, err := json.Marshal(v)
	if err != nil || !json.Valid(raw) {
		t.Fatalf("the view does not encode: %v", err)
	}
	var back Consent
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	checkPrintable(t, back)
	if !strings.Contains(back.Hypothesis, `\x1b[31mred`) || !strings.Contains(back.Hypothesis, "<script>") {
		t.Errorf("hypothesis %q: the escapes should be visible, the HTML kept as text", back.Hypothesis)
	}
	if len(raw) > 64<<10 {
		t.Errorf("the view is %d bytes of JSON", len(raw))
	}
}

// checkPrintable fails on any control character (but newline and tab in
// text that has lines) and any bidirectional control in v's strings.
func checkPrintable(t *testing.T, v Consent) {
	t.Helper()
	bad := func(field, s string, lines bool) {
		for _, r := range s {
			if (r == '\n' || r == '\t') && lines {
				continue
			}
			if unicode.IsControl(r) || escaped(r, lines) {
				t.Errorf("%s holds %U: %q", field, r, s)
				return
			}
		}
	}
	bad("hypothesis", v.Hypothesis, true)
	bad("why", v.Why, false)
	bad("evidence", v.Deliverable.Evidence, true)
	for _, r := range v.Reasons {
		for _, s := range []string{r.Kind, r.Text, r.Rule, r.Source, r.Quote, r.Role, r.Team} {
			bad("reason", s, false)
		}
	}
	for _, c := range v.Deliverable.Citations {
		bad("citation", c.Source+c.Quote, false)
	}
}

func TestPrintable(t *testing.T) {
	for _, tc := range []struct {
		in, lines, line string
	}{
		{"plain ✓ text", "plain ✓ text", "plain ✓ text"},
		{"a\nb\tc", "a\nb\tc", `a\x0ab\x09c`},
		{"\x1b[2J\a", `\x1b[2J\x07`, `\x1b[2J\x07`},
		{"\u009b1m", `\u009b1m`, `\u009b1m`},
		{"\u202egnp.exe", `\u202egnp.exe`, `\u202egnp.exe`},
		{"bad \xff byte", `bad \xff byte`, `bad \xff byte`},
		{"<b>&amp;</b>", "<b>&amp;</b>", "<b>&amp;</b>"},
	} {
		if got := Printable(tc.in, true); got != tc.lines {
			t.Errorf("Printable(%q, lines) = %q, want %q", tc.in, got, tc.lines)
		}
		if got := Printable(tc.in, false); got != tc.line {
			t.Errorf("Printable(%q, one line) = %q, want %q", tc.in, got, tc.line)
		}
	}
	if got := cutTail("aé✓", 4); got != "✓" {
		t.Errorf("cutTail cut a rune: %q", got)
	}
	if got := cutHead("aé✓", 4); got != "aé…" {
		t.Errorf("cutHead cut a rune: %q", got)
	}
}

// TestFitConsents: a long queue of large requests fits MQTT's cap, the
// oldest request whole, the others' deliverables left out first.
func TestFitConsents(t *testing.T) {
	var cs []Consent
	for i := range 20 {
		r := engine.ConsentRequest{Node: "n" + string(rune('a'+i)), Quest: "q1", Role: "scout", Hypothesis: strings.Repeat("h", 900),
			ClaimHash: strings.Repeat("0", 64), Since: t0.Add(time.Duration(i) * time.Second),
			Reasons:     []engine.ConsentReason{{Kind: engine.ReasonRule, Text: citationsPresent.String(), Fact: &citationsPresent}},
			Deliverable: engine.Deliverable{Node: "n1", Evidence: strings.Repeat("<&>", 3000)}}
		cs = append(cs, ConsentView(r, t0))
	}
	fit := FitConsents(cs, MaxConsentPayload)
	raw, _ := json.Marshal(fit)
	if len(raw) > MaxConsentPayload || !json.Valid(raw) {
		t.Fatalf("fitted list is %d bytes (cap %d), valid %v", len(raw), MaxConsentPayload, json.Valid(raw))
	}
	if len(fit) < 2 || fit[0].Node != cs[0].Node {
		t.Fatalf("fitted list keeps %d requests, first %s", len(fit), fit[0].Node)
	}
	if fit[len(fit)-1].Deliverable.Evidence != "" || !fit[len(fit)-1].Deliverable.EvidenceCut {
		t.Errorf("the newest kept request still has its evidence")
	}
	if cs[len(cs)-1].Deliverable.Evidence == "" {
		t.Error("FitConsents changed its argument")
	}
	if b, _ := json.Marshal(FitConsents(nil, MaxConsentPayload)); string(b) != "[]" {
		t.Errorf("no requests fit as %s, want []", b)
	}
	one := FitConsents(cs[:1], 100)
	if len(one) != 1 || one[0].Node != cs[0].Node {
		t.Errorf("a single request too large for the cap is dropped: %+v", one)
	}
}

// TestConsentsThroughTheAPI: a REVIEW caused by a rule, on a 256 KiB
// answer full of escapes, shows its rule, fact and evidence on GET
// /api/consents and /api/consents/{node}, and on the outbox's consent
// event; a node that awaits no consent is not found, saying why.
func TestConsentsThroughTheAPI(t *testing.T) {
	st, err := engine.OpenStore(t.TempDir(), engine.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// No evidence-length rule: a huge evidence reaches the human.
	cat, err := gates.NewCatalog(gates.ContractRule(), gates.CitationsPresent())
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(st, engine.Options{Catalog: func(*engine.Quest) (*gates.Catalog, error) { return cat, nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Shutdown(0); st.Close() })
	srv := New(Options{Engines: Only(eng), Internal: true})
	ctx := context.Background()
	ob, err := srv.OpenOutbox(ctx, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()

	s := eng.NewQuestSpec("ocr", "free OCR")
	s.Provider = engine.ProviderExternal
	q, err := eng.NewQuest(s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Scan(q.ID, []string{"tesseract jpn", "paddle"}); err != nil {
		t.Fatal(err)
	}
	head, _ := json.Marshal(map[string]any{"verdict": "conclusion", "citations": []any{}, "new_directions": []string{}})
	room := gates.MaxAnswerBytes - len(head) - 64
	unit, _ := json.Marshal(hostile + "\n") // as the answer's JSON writes it
	evidence := strings.Repeat(hostile+"\n", room/(len(unit)-2)-1) + "THE END"
	ans, _ := json.Marshal(map[string]any{"verdict": "conclusion", "evidence": evidence, "citations": []any{}, "new_directions": []string{}})
	raw := "```json\n" + string(ans) + "\n```\n"
	if len(raw) > gates.MaxAnswerBytes || len(raw) < 250<<10 {
		t.Fatalf("the answer is %d bytes, want about 256 KiB", len(raw))
	}
	res, err := eng.Submit(ctx, q.ID, "n1", []byte(raw))
	if err != nil || res.Status != engine.AwaitingConsent {
		t.Fatalf("submit: %+v, %v; want awaiting_consent", res, err)
	}

	hc, stop := InProcess(srv)
	defer stop()
	c := NewClient(hc, "test")
	cs, err := c.Consents(ctx)
	if err != nil || len(cs) != 1 {
		t.Fatalf("GET /api/consents: %+v, %v", cs, err)
	}
	one, err := c.Consent(ctx, "n1")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []Consent{cs[0], one} {
		if len(v.Reasons) != 1 || v.Reasons[0].Kind != "rule" || v.Reasons[0].Rule != gates.RuleCitationsPresent || v.Reasons[0].Level != "review" ||
			v.Reasons[0].Text != citationsPresent.String() {
			t.Errorf("reasons %+v, want the citations-present rule and its fact", v.Reasons)
		}
		if v.ClaimHash != res.ClaimHash || !v.Deliverable.EvidenceCut || !strings.HasSuffix(v.Deliverable.Evidence, "THE END") {
			t.Errorf("claim %s (want %s), evidence cut %v", v.ClaimHash, res.ClaimHash, v.Deliverable.EvidenceCut)
		}
		checkPrintable(t, v)
	}
	for node, want := range map[string]string{"n2": "node n2 is pending: no consent waits for it", "n9": "n9"} {
		_, err := c.Consent(ctx, node)
		if ae, ok := err.(*Error); !ok || ae.Code != CodeNotFound || !strings.Contains(ae.Message, want) {
			t.Errorf("GET /api/consents/%s: %v, want not found saying %q", node, err, want)
		}
	}

	evs, err := ob.Read(0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got *Consent
	for _, ev := range evs {
		if ev.Kind == KindConsent && ev.Outcome == ConsentRequested {
			got = ev.Consent
		}
	}
	if got == nil || got.Node != "n1" || got.Reasons[0].Rule != gates.RuleCitationsPresent {
		t.Fatalf("the consent event carries %+v, want n1's request", got)
	}
	if b, _ := json.Marshal(got); len(b) > MaxConsentPayload {
		t.Errorf("the consent event's view is %d bytes, over %d", len(b), MaxConsentPayload)
	}
}
