package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/gates"
	"github.com/questbox/questbox/internal/config"
	"github.com/questbox/questbox/ui/dashboard/browsertest"
)

// hostile is agent text that would run script, draw an element or drive
// a terminal if a face took it for anything but text.
const hostile = `<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2"><b>bold</b> ` +
	"\x1b[31mred\x1b[0m \x1b]8;;https://evil.example/\x07link\x1b]8;;\x07 \u202eevil\u202c"

// uncited is a conclusion that cites nothing (REVIEW by citations-present).
func uncited(evidence string) []byte {
	b, _ := json.Marshal(map[string]any{"verdict": "conclusion", "evidence": evidence, "citations": []any{}, "new_directions": []string{}})
	return []byte("```json\n" + string(b) + "\n```\n")
}

// runner runs steps in the tab, failing the test with a screenshot.
func runner(t *testing.T, ctx context.Context) func(what string, steps ...chromedp.Action[chromedp.Void]) {
	return func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(browsertest.Timeout(t, ctx), steps...); err != nil {
			browsertest.Screenshot(t, ctx, "failed")
			t.Fatalf("%s: %v", what, err)
		}
	}
}

// phone is a 390 by 844 portrait viewport (a phone's CSS pixels).
var phone = chromedp.EmulateViewport(390, 844, chromedp.EmulatePortrait)

// TestBrowserConsentCard: on a phone, the card of a REVIEW caused by a
// rule shows the rule's id, its fact and the evidence (as text, whatever
// it holds), and the sim backend's virtual button next to it, on screen
// without scrolling; holding it approves that request, and the next one
// takes its place.
func TestBrowserConsentCard(t *testing.T) {
	ctx := browsertest.New(t)
	f := start(t, setup{sim: true})
	f.quest(nil, "tesseract reads the receipts")
	cp := f.quest([]string{engine.RoleScout}, "easyocr reads the totals")
	// A 256 KiB answer: the agent's prose around the JSON, then the JSON.
	evidence := strings.Repeat(hostile+"\n", 60) + "THE END"
	prose := strings.Repeat(hostile+"\n", (gates.MaxAnswerBytes-len(uncited(evidence))-64)/(len(hostile)+1))
	res := f.submit("q1", "n1", append([]byte(prose), uncited(evidence)...))
	if res.Status != engine.AwaitingConsent {
		t.Fatalf("n1: %+v, want awaiting consent", res)
	}
	f.submit(cp.ID, "n2", answer("promising", "easyocr reads every total on the invoices.", "try the line items"))
	fact := gates.Fact{Rule: gates.RuleCitationsPresent, Level: gates.Review, Where: "citations", Expected: "at least one citation for a conclusion", Actual: "none"}

	run := runner(t, ctx)
	run("open the page on a phone", phone, chromedp.Navigate(f.url))
	browsertest.WaitFor(t, ctx, "the login form", `!document.getElementById('login').hidden`)
	run("log in", chromedp.SendKeys("#password", testPassword), chromedp.Click(`#login-form button[type=submit]`))
	card := `[data-consent="n1"]`
	browsertest.WaitFor(t, ctx, "n1's card with the virtual button", `document.querySelector('[data-actions="n1"] [data-press="long"]') !== null`)

	if w := browsertest.Eval[int](t, ctx, `window.innerWidth`); w != 390 {
		t.Fatalf("the page is %d px wide, want 390", w)
	}
	if got := browsertest.Eval[string](t, ctx, `document.querySelector('[data-consent="n1"] [data-reason="rule"]').dataset.rule`); got != gates.RuleCitationsPresent {
		t.Errorf("the card's rule is %q, want %s", got, gates.RuleCitationsPresent)
	}
	if got := browsertest.Text(t, ctx, card+` [data-reason="rule"] .reason-text`); len(got) != 1 || got[0] != fact.String() {
		t.Errorf("the card's fact reads %q, want %q", got, fact.String())
	}
	ev := browsertest.Text(t, ctx, card+` pre.evidence`)
	if len(ev) != 1 || !strings.HasSuffix(ev[0], "THE END") || !strings.Contains(ev[0], "<script>window.pwned = 1</script>") || !strings.Contains(ev[0], `\x1b[31mred`) {
		t.Errorf("the card's evidence reads %q…, want the answer's end as text", ev)
	}
	if len(browsertest.Text(t, ctx, card+` [data-cut]`)) != 1 {
		t.Error("the card does not say the evidence was cut")
	}
	if n := browsertest.Eval[int](t, ctx, `document.querySelectorAll('.consent script, .consent img, .consent b').length`); n != 0 {
		t.Errorf("agent text made %d elements", n)
	}
	if browsertest.Eval[bool](t, ctx, `window.pwned !== undefined`) {
		t.Error("agent text ran")
	}
	// The action is on screen with the card, without scrolling.
	onScreen := `(() => { const b = document.querySelector('[data-actions="n1"] [data-press="long"]').getBoundingClientRect();
		const c = document.querySelector('[data-consent="n1"]').getBoundingClientRect();
		return window.scrollY === 0 && c.top >= 0 && c.top < innerHeight && b.top >= 0 && b.bottom <= innerHeight && b.right <= innerWidth; })()`
	if !browsertest.Eval[bool](t, ctx, onScreen) {
		browsertest.Screenshot(t, ctx, "not-on-screen")
		t.Errorf("the virtual button is not on screen with the card: %s", browsertest.Eval[string](t, ctx,
			`JSON.stringify(document.querySelector('[data-actions="n1"]').getBoundingClientRect()) + ' in ' + innerWidth + 'x' + innerHeight`))
	}
	if got := browsertest.Text(t, ctx, `[data-actions="n2"]`); len(got) != 1 || !strings.Contains(got[0], "oldest request first") {
		t.Errorf("the second card's actions read %q, want that the button answers the oldest first", got)
	}
	browsertest.ScreenshotOf(t, ctx, card, "consent-card")

	run("hold the virtual button", chromedp.Click(`[data-actions="n1"] [data-press="long"]`))
	browsertest.WaitFor(t, ctx, "n1's card gone, n2's with the button", fmt.Sprintf(`document.querySelector(%q) === null && document.querySelector('[data-actions="n2"] [data-press="long"]') !== null`, card))
	if n, _ := f.eng.Node("n1"); n.Status == engine.AwaitingConsent {
		t.Errorf("n1 is still %s after the press", n.Status)
	}
	if got := browsertest.Text(t, ctx, `[data-consent="n2"] [data-reason="checkpoint"]`); len(got) != 1 || got[0] != "checkpoint of role scout" {
		t.Errorf("n2's reason reads %q, want the checkpoint", got)
	}
}

// TestBrowserConsentCardAnswers: with no simulated button the card says
// to hold the box's; where the owner enabled dashboard consent, a
// logged-in page rejects from the card, bound to the claim shown.
func TestBrowserConsentCardAnswers(t *testing.T) {
	ctx := browsertest.New(t)
	f := start(t, setup{cfg: config.Dashboard{Read: config.ReadPublic, Consent: true}})
	f.quest([]string{engine.RoleScout}, "easyocr reads the totals")
	res := f.submit("q1", "n1", answer("promising", "easyocr reads every total on the invoices.", "try the line items"))
	run := runner(t, ctx)
	run("open the page on a phone", phone, chromedp.Navigate(f.url))
	browsertest.WaitFor(t, ctx, "the card, logged out", `document.querySelector('[data-actions="n1"] [data-button="real"]') !== null`)
	if got := browsertest.Text(t, ctx, `[data-actions="n1"]`); len(got) != 1 || !strings.Contains(got[0], "Hold the button on the box 2 s") {
		t.Errorf("logged out, the card's action reads %q", got)
	}
	run("log in", chromedp.SendKeys("#password", testPassword), chromedp.Click(`#login-form button[type=submit]`))
	browsertest.WaitFor(t, ctx, "Approve and Reject on the card", `document.querySelector('[data-actions="n1"] button.danger') !== null`)
	browsertest.ScreenshotOf(t, ctx, `[data-consent="n1"]`, "consent-card-dashboard")
	run("reject", chromedp.Click(`[data-actions="n1"] button.danger`))
	browsertest.WaitFor(t, ctx, "the card gone", `document.querySelector('[data-consent="n1"]') === null`)
	n, err := f.eng.Node("n1")
	if err != nil {
		t.Fatal(err)
	}
	if a := n.LastAttempt; n.Status == engine.AwaitingConsent || a == nil || a.Outcome != "rejected" || a.ClaimHash != res.ClaimHash {
		t.Errorf("n1 after the reject: %s, last attempt %+v; want rejected for claim %s", n.Status, a, res.ClaimHash)
	}
}
