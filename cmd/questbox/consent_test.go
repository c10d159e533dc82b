package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/questbox/questbox/gates"
	"github.com/questbox/questbox/ui/api"
)

// hostile is agent text that tries HTML, a terminal's CSI and OSC 8
// sequences, a bell, a carriage return, a C1 CSI, a bidirectional
// override and wide characters on the terminal that prints it.
const hostile = "<script>alert(1)</script> \x1b[31mred\x1b[0m \x1b]8;;https://evil.example/\x07link\x1b]8;;\x07 bell\x07 cr\rover " +
	"\u009b2J \u202eevil\u202c 日本語の請求書を読むのはとても難しいです https://example.org/a/very/long/path/that/does/not/fit/on/one/line/of/eighty/columns/at/all"

// uncitedAnswer is a conclusion that cites nothing: the default gate's
// citations-present rule sends it to REVIEW.
func uncitedAnswer(evidence string) string {
	b, _ := json.Marshal(map[string]any{"verdict": "conclusion", "evidence": evidence, "citations": []any{}, "new_directions": []string{}})
	return "```json\n" + string(b) + "\n```\n"
}

// checkTerminal fails unless every line of out fits 80 columns and out
// holds no control character but newline, nor a bidirectional control.
func checkTerminal(t *testing.T, what, out string) {
	t.Helper()
	for i, l := range strings.Split(out, "\n") {
		if c := columns(l); c > termWidth {
			t.Errorf("%s: line %d is %d columns: %q", what, i+1, c, l)
		}
	}
	for _, r := range out {
		if r != '\n' && (unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)) {
			t.Errorf("%s: prints %U", what, r)
			return
		}
	}
}

// unwrapped is text as one line: what was wrapped reads whole again.
func unwrapped(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestConsentVerbs: `consent list` and `consent show` print the request
// of a REVIEW caused by a rule (its rule id and fact) and of a checkpoint
// (its role), with the evidence, on 80 columns, with the agent's escapes
// made harmless; --json prints the API's view.
func TestConsentVerbs(t *testing.T) {
	data := dataDir(t)
	d := []string{"--data", data}
	must(t, 0, "", append([]string{"quest", "new", "ocr", "--direction", "free OCR for invoices", "--provider", "external"}, d...)...)
	must(t, 0, "", append([]string{"quest", "new", "cp", "--direction", "look with a human", "--provider", "external", "--checkpoint", "scout"}, d...)...)
	must(t, 0, "", append([]string{"scan", "q1", hostile, "paddle"}, d...)...)
	must(t, 0, "", append([]string{"scan", "q2", "easyocr"}, d...)...)
	if r := must(t, 0, "", append([]string{"consent", "list"}, d...)...); strings.TrimSpace(r.stdout) != "no consent waits" {
		t.Errorf("consent list of none: %q", r.stdout)
	}
	evidence := strings.Repeat(hostile+"\n", 20) + "THE END"
	must(t, exitReview, uncitedAnswer(evidence), append([]string{"submit", "q1", "--node", "n1"}, d...)...)
	must(t, exitReview, answer("promising", "easyocr reads the totals of every invoice.", "try the line items"), append([]string{"submit", "q2", "--node", "n3"}, d...)...)

	list := must(t, 0, "", append([]string{"consent", "list"}, d...)...).stdout
	checkTerminal(t, "consent list", list)
	fact := gates.Fact{Rule: gates.RuleCitationsPresent, Level: gates.Review, Where: "citations", Expected: "at least one citation for a conclusion", Actual: "none"}
	for _, want := range []string{"2 consent request(s) wait", "n1 · scout · quest q1", fact.String(), "n3 · scout · quest q2", "checkpoint of role scout",
		"n1's conclusion", `\x1b[31mred`, "hold it 2 s to approve"} {
		if !strings.Contains(unwrapped(list), want) {
			t.Errorf("consent list does not say %q:\n%s", want, list)
		}
	}

	show := must(t, 0, "", append([]string{"consent", "show", "n1"}, d...)...).stdout
	checkTerminal(t, "consent show", show)
	var v api.Consent
	decode(t, must(t, 0, "", append([]string{"consent", "show", "n1", "--json"}, d...)...), &v)
	for _, want := range []string{fact.String(), "THE END", v.ClaimHash, "<script>alert(1)</script>", `\u202eevil`, "日本語の請求書を読むのはとても難しいです"} {
		if !strings.Contains(unwrapped(show), want) {
			t.Errorf("consent show does not say %q:\n%s", want, show)
		}
	}
	if len(v.Reasons) != 1 || v.Reasons[0].Rule != gates.RuleCitationsPresent || v.Reasons[0].Text != fact.String() || !strings.HasSuffix(v.Deliverable.Evidence, "THE END") {
		t.Errorf("consent show --json: %+v", v)
	}
	var all []api.Consent
	decode(t, must(t, 0, "", append([]string{"consent", "list", "--json"}, d...)...), &all)
	if len(all) != 2 || all[0].Node != "n1" || all[1].Reasons[0].Kind != "checkpoint" || all[1].Reasons[0].Role != "scout" {
		t.Errorf("consent list --json: %+v", all)
	}

	for _, tc := range []struct{ node, want string }{
		{"n2", "node n2 is pending: no consent waits for it"},
		{"n99", "n99"},
	} {
		if r := must(t, 1, "", append([]string{"consent", "show", tc.node}, d...)...); !strings.Contains(r.stderr, tc.want) {
			t.Errorf("consent show %s: %q, want %q", tc.node, r.stderr, tc.want)
		}
	}
}

// TestConsentShowsA256KiBAnswer: an answer as large as the gate takes
// (under a gate without evidence-length) prints its evidence's end only,
// saying so, on 80 columns.
func TestConsentShowsA256KiBAnswer(t *testing.T) {
	cfg := writeConfig(t, `
[[gates.big.rules]]
id = "contract"
kind = "contract"
level = "fail"

[[gates.big.rules]]
id = "citations-present"
kind = "citations-present"
level = "review"
`)
	data := dataDir(t)
	d := []string{"--data", data, "--config", cfg}
	must(t, 0, "", append([]string{"quest", "new", "big", "--direction", "d", "--provider", "external", "--gate", "big"}, d...)...)
	must(t, 0, "", append([]string{"scan", "q1", "h"}, d...)...)
	unit, _ := json.Marshal(hostile + "\n")
	evidence := strings.Repeat(hostile+"\n", (gates.MaxAnswerBytes-200)/(len(unit)-2)) + "THE END"
	ans := uncitedAnswer(evidence)
	if len(ans) > gates.MaxAnswerBytes || len(ans) < 250<<10 {
		t.Fatalf("the answer is %d bytes, want about 256 KiB", len(ans))
	}
	must(t, exitReview, ans, append([]string{"submit", "q1", "--node", "n1"}, d...)...)
	show := must(t, 0, "", append([]string{"consent", "show", "n1"}, d...)...).stdout
	checkTerminal(t, "consent show", show)
	if !strings.Contains(unwrapped(show), "its start is cut, its last 4.1KB shown") || !strings.HasSuffix(strings.TrimSpace(strings.Split(show, "\n\n")[0]), "THE END") {
		t.Errorf("consent show of a 256 KiB answer:\n%s", show)
	}
	if len(show) > 32<<10 {
		t.Errorf("consent show printed %d bytes", len(show))
	}
}

// TestConsentTextOfEveryKind prints the API's golden request of each
// reason kind: each says its own reason on 80 columns.
func TestConsentTextOfEveryKind(t *testing.T) {
	for name, want := range map[string][]string{
		"consent_rule":        {"REVIEW citations-present @ citations: expected at least one citation for a conclusion, got none", "expires in"},
		"consent_judge":       {"REVIEW judge @ claim", "haiku raised doubt: the quote does not say 38 of 40", "cited: https://example.org/bench: “38 of 40”"},
		"consent_checkpoint":  {"checkpoint of role poc"},
		"consent_team_accept": {"accepter of Team n7 (accept stage)", "human accept of Team n7", "n8's conclusion", "citations-present", "expired"},
		"consent_egress":      {"quest q2 would send its material to vendor anthropic (egress)", "Egress consent: may quest q2"},
		"consent":             {"reason not recorded"},
	} {
		raw, err := os.ReadFile(filepath.Join("..", "..", "ui", "api", "testdata", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var v api.Consent
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		for _, whole := range []bool{false, true} {
			var b strings.Builder
			writeConsent(&b, v, whole)
			checkTerminal(t, name, b.String())
			for _, w := range want {
				if !strings.Contains(unwrapped(b.String()), w) {
					t.Errorf("%s (whole %v) does not say %q:\n%s", name, whole, w, b.String())
				}
			}
		}
	}
}

func TestWrap(t *testing.T) {
	var b strings.Builder
	wrap(&b, "  why: ", "    ", strings.Repeat("word ", 30)+strings.Repeat("x", 200)+" 日本語"+strings.Repeat("語", 60)+" \x1b[2J\a")
	out := b.String()
	checkTerminal(t, "wrap", out)
	if !strings.HasPrefix(out, "  why: word word") || !strings.Contains(out, "\n    word") || !strings.Contains(out, `\x1b[2J\x07`) {
		t.Errorf("wrapped:\n%s", out)
	}
	if got := strings.Join(strings.Fields(strings.ReplaceAll(out, "\n    ", "")), " "); !strings.Contains(got, strings.Repeat("x", 200)) {
		t.Errorf("a long word was not kept whole across its lines: %q", got)
	}
}
