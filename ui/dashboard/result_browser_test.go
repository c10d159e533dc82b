package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/planttest"
	"github.com/questbox/questbox/ui/api"
	"github.com/questbox/questbox/ui/dashboard/browsertest"
)

// hostileText is an answer's text that tries to be markup and to drive a
// terminal: on the page it must be text, nothing else.
const hostileText = `<img src=x onerror="window.pwned=1"><script>window.pwned=2</script><b>bold</b>` + " \x1b[2J\x1b]0;title\x07 \u202eevil\u202c"

// conclusion is a worker's conclusion that cites one source.
func conclusion(t *testing.T, evidence, source, quote string) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"verdict": "conclusion", "evidence": evidence,
		"citations": []any{map[string]string{"source": source, "quote": quote}}, "new_directions": []string{}})
	if err != nil {
		t.Fatal(err)
	}
	return []byte("```json\n" + string(b) + "\n```\n")
}

// TestBrowserQuestResult drives the page in headless Chromium on a phone:
// the demo quest, run to its end with the button held for its consent,
// shows what it found at the top of its card, above the graph: its
// conclusions with evidence and citations, the gate's word and who
// approved the one that cites nothing, the owner's closing statement, all
// as the API gives them. A second quest's answers of markup and escape
// sequences, and of 60 KiB of evidence, show as text only (the escape
// sequences written as escapes), capped with a note of what was cut.
func TestBrowserQuestResult(t *testing.T) {
	ctx := browsertest.New(t)
	f := start(t, setup{providers: map[string]engine.Provider{engine.ProviderDemo: agent.Demo{}}})
	demo, err := planttest.Demo(context.Background(), f.eng)
	if err != nil {
		t.Fatal(err)
	}
	r, err := f.eng.Result(demo)
	if err != nil {
		t.Fatal(err)
	}
	want := api.ResultView(r)
	other := f.quest(nil, "big", "hostile")
	big := strings.Repeat("請求書を読む。", 20000/7)
	ns, err := f.eng.Nodes(other.ID)
	if err != nil || len(ns) != 2 {
		t.Fatalf("the second quest's nodes: %v, %v", ns, err)
	}
	bigNode, evilNode := ns[0].ID, ns[1].ID
	f.submit(other.ID, bigNode, conclusion(t, big, "https://example.org/bench", "98% on invoices"))
	f.submit(other.ID, evilNode, conclusion(t, hostileText, "https://example.org/"+hostileText, hostileText))

	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(browsertest.Timeout(t, ctx), steps...); err != nil {
			browsertest.Screenshot(t, ctx, "failed")
			t.Fatalf("%s: %v", what, err)
		}
	}
	run("open the page", chromedp.Navigate(f.url))
	browsertest.WaitFor(t, ctx, "the login form", `!document.getElementById('login').hidden`)
	run("log in", chromedp.SendKeys("#password", testPassword), chromedp.Click(`#login-form button[type=submit]`))
	browsertest.WaitFor(t, ctx, "the first render", `document.body.dataset.ready === 'true'`)
	res := fmt.Sprintf(`[data-result=%q]`, demo)
	browsertest.WaitFor(t, ctx, "the demo's findings", fmt.Sprintf(`document.querySelectorAll('%s [data-finding]').length === %d`, res, len(want.Findings)))

	// Above the graph, in the quest's card.
	if !browsertest.Eval[bool](t, ctx, fmt.Sprintf(`(() => { const r = document.querySelector('%s'), g = document.querySelector('[data-graph=%q]');
		return r.closest('[data-quest]').dataset.quest === %q && !!(r.compareDocumentPosition(g) & Node.DOCUMENT_POSITION_FOLLOWING); })()`, res, demo, demo)) {
		t.Error("the result is not in the quest's card above its graph")
	}
	if got := browsertest.Text(t, ctx, res+` [data-headline]`); len(got) != 1 || got[0] != want.Headline {
		t.Errorf("headline %q, want %q", got, want.Headline)
	}
	if got := browsertest.Text(t, ctx, res+` [data-statement]`); len(got) != 1 || got[0] != want.Ending.Statement {
		t.Errorf("closing statement %q, want %q", got, want.Ending.Statement)
	}
	// The conclusions, first: their evidence, citations and gate.
	ids := browsertest.Eval[[]string](t, ctx, fmt.Sprintf(`[...document.querySelectorAll('%s [data-finding]')].map(e => e.dataset.finding)`, res))
	var approved, cited bool
	for i, f := range want.Findings {
		if i >= len(ids) || ids[i] != f.Node {
			t.Errorf("finding %d on the page is %v, want %s (conclusions first)", i, ids, f.Node)
			continue
		}
		if f.Kind != api.FindingConclusion {
			continue
		}
		li := fmt.Sprintf(`%s [data-finding=%q]`, res, f.Node)
		if got := browsertest.Text(t, ctx, li+` [data-evidence]`); len(got) != 1 || got[0] != f.Evidence {
			t.Errorf("conclusion %s's evidence %q, want %q", f.Node, got, f.Evidence)
		}
		gate := browsertest.Text(t, ctx, li+` [data-gate]`)[0]
		if a := f.Approval; a != nil {
			approved = strings.HasPrefix(gate, "gate: REVIEW, approved on the button at ") && strings.HasSuffix(gate, "(on "+a.Node+")")
			if !approved {
				t.Errorf("conclusion %s's gate reads %q", f.Node, gate)
			}
		}
		for j, c := range f.Citations {
			src := browsertest.Text(t, ctx, li+` [data-citations] [data-source]`)
			quote := browsertest.Text(t, ctx, li+` [data-citations] [data-quote]`)
			if j >= len(src) || src[j] != c.Source || quote[j] != c.Quote {
				t.Errorf("conclusion %s cites %q %q, want %q %q", f.Node, src, quote, c.Source, c.Quote)
				continue
			}
			cited = cited || c.Source == agent.DemoCitationSource
		}
	}
	if !approved || !cited {
		t.Errorf("the page shows a conclusion approved on the button: %v, one citing %s: %v", approved, agent.DemoCitationSource, cited)
	}
	browsertest.ScreenshotOf(t, ctx, res, "demo-result")

	// The hostileText and the big answer: text only, capped.
	other2 := fmt.Sprintf(`[data-result=%q]`, other.ID)
	browsertest.WaitFor(t, ctx, "the second quest's findings", fmt.Sprintf(`document.querySelectorAll('%s [data-finding]').length === 2`, other2))
	// The API wrote its control characters as escapes; the page shows
	// that text, its markup as characters.
	text := api.Printable(hostileText, true)
	if !strings.Contains(text, `\x1b[2J`) || !strings.Contains(text, "<script>") {
		t.Fatalf("api.Printable(hostileText, true) = %q", text)
	}
	if got := browsertest.Text(t, ctx, fmt.Sprintf(`%s [data-finding=%q] [data-evidence]`, other2, evilNode)); len(got) != 1 || got[0] != text {
		t.Errorf("the hostileText evidence reads %q, want %q as text", got, text)
	}
	if got := browsertest.Text(t, ctx, fmt.Sprintf(`%s [data-finding=%q] [data-quote]`, other2, evilNode)); len(got) != 1 || got[0] != text {
		t.Errorf("the hostileText quote reads %q, want %q as text", got, text)
	}
	if n := browsertest.Eval[int](t, ctx, fmt.Sprintf(`document.querySelectorAll('%s img, %s script, %s b').length`, other2, other2, other2)); n != 0 {
		t.Errorf("the hostileText answer made %d elements", n)
	}
	if browsertest.Eval[bool](t, ctx, `window.pwned !== undefined`) {
		t.Error("the hostileText answer ran script")
	}
	ev := browsertest.Text(t, ctx, fmt.Sprintf(`%s [data-finding=%q] [data-evidence]`, other2, bigNode))
	wantEv, cut := api.Clip(big, api.EvidenceCap)
	if len(ev) != 1 || ev[0] != wantEv {
		t.Errorf("the big evidence shows %d bytes, want its first %d", len(strings.Join(ev, "")), len(wantEv))
	}
	if got := browsertest.Text(t, ctx, fmt.Sprintf(`%s [data-cut=%q]`, other2, bigNode)); len(got) != 1 || got[0] != api.CutNote(cut) {
		t.Errorf("the big evidence's note %q, want %q", got, api.CutNote(cut))
	}
	browsertest.ScreenshotOf(t, ctx, other2, "capped-and-inert")
}
