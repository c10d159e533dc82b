package dashboard

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/planttest"
	"github.com/questbox/questbox/ui/dashboard/browsertest"
)

// overlaps is the JavaScript that lists every pair of a graph's captions
// whose boxes on screen intersect: node labels, stage strips and
// decisions, Team kinds, votes, revisions, crowns and council captions.
const overlaps = `(() => {
	const sel = '.label, [data-strip], .stage-label, .team-kind, .vote-text, .rev, .crown, .council text';
	const out = [];
	for (const g of document.querySelectorAll('[data-graph]')) {
		const els = [...g.querySelectorAll(sel)];
		const rs = els.map((e) => e.getBoundingClientRect());
		for (let i = 0; i < els.length; i++) for (let j = i + 1; j < els.length; j++) {
			const a = rs[i], b = rs[j];
			if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5) {
				const name = (e) => (e.closest('[data-node]') || e.closest('[data-council]')).getAttribute('data-node') + ':' + (e.getAttribute('class') || 'strip') + ' "' + e.textContent + '"';
				out.push(name(els[i]) + ' × ' + name(els[j]));
			}
		}
	}
	return out;
})()`

// smallest is the smallest node label's font size on screen, in CSS pixels.
const smallest = `Math.min(...[...document.querySelectorAll('[data-graph] .label')].map((e) => parseFloat(getComputedStyle(e).fontSize) * e.getScreenCTM().a))`

// TestBrowserPhoneAndDesktop is the page at a phone's 390×844 and a
// desktop's 1280×900, over the demo quest (run to its end), a quest with
// Teams and a council, and a checkpoint's consent that waits: logged out
// the page is the login alone; logged in nothing scrolls sideways, the
// consent card and its button are on screen first, and in the graphs the
// node labels are 11 px or more and no caption overlaps another, folded
// and with a Team expanded.
func TestBrowserPhoneAndDesktop(t *testing.T) {
	ctx := browsertest.New(t)
	f := start(t, setup{sim: true, providers: map[string]engine.Provider{engine.ProviderDemo: agent.Demo{}}})
	if _, err := planttest.Demo(context.Background(), f.eng); err != nil {
		t.Fatal(err)
	}
	v32 := f.quest(nil)
	fx, err := planttest.V32(f.eng, v32.ID)
	if err != nil {
		t.Fatal(err)
	}
	cp := f.quest([]string{engine.RoleScout}, "easyocr reads the totals")
	ns, err := f.eng.Nodes(cp.ID)
	if err != nil || len(ns) != 1 {
		t.Fatalf("the checkpoint quest's nodes: %v, %v", ns, err)
	}
	if res := f.submit(cp.ID, ns[0].ID, answer("promising", "easyocr reads every total on the invoices.", "try the line items")); res.Status != engine.AwaitingConsent {
		t.Fatalf("the checkpoint's node: %+v, want awaiting consent", res)
	}
	wait := ns[0].ID
	run := runner(t, ctx)

	// Logged out: the login and nothing else.
	run("open the page on a phone", phone, chromedp.Navigate(f.url))
	browsertest.WaitFor(t, ctx, "the login form", `!document.getElementById('login').hidden`)
	shown := `[...document.querySelectorAll('main > section, main > nav, main > div')].filter((e) => e.offsetParent !== null).map((e) => e.id)`
	if got := browsertest.Eval[[]string](t, ctx, shown); len(got) != 1 || got[0] != "login" {
		t.Errorf("logged out, the page shows %q, want the login alone", got)
	}
	if txt := browsertest.Eval[string](t, ctx, `document.body.innerText`); strings.Contains(txt, "No daemon state") || strings.Contains(txt, "Loading") {
		t.Errorf("logged out, the page reads %q", txt)
	}
	browsertest.ScreenshotView(t, ctx, "login-390")
	run("log in", chromedp.SendKeys("#password", testPassword), chromedp.Click(`#login-form button[type=submit]`))
	browsertest.WaitFor(t, ctx, "the first render", `document.body.dataset.ready === 'true'`)

	for _, size := range []struct {
		w, h int64
		vp   chromedp.Action[chromedp.Void]
	}{{390, 844, phone}, {1280, 900, chromedp.EmulateViewport(1280, 900)},
		{360, 740, chromedp.EmulateViewport(360, 740, chromedp.EmulatePortrait)}, {430, 932, chromedp.EmulateViewport(430, 932, chromedp.EmulatePortrait)}} {
		name := fmt.Sprintf("%d", size.w)
		run("open the page at "+name, size.vp, chromedp.Navigate(f.url+"#quests"), chromedp.Reload())
		browsertest.WaitFor(t, ctx, "the first render", `document.body.dataset.ready === 'true'`)
		// A graph's data-zoom says it is fit to its frame.
		browsertest.WaitFor(t, ctx, "three graphs fit", `document.querySelectorAll('[data-graph] [data-node]').length > 0 && (g => g.length === 3 && g.every((e) => e.dataset.zoom))([...document.querySelectorAll('[data-graph]')])`)
		browsertest.WaitFor(t, ctx, "the consent's button", fmt.Sprintf(`document.querySelector('[data-actions=%q] [data-press="long"]') !== null`, wait))
		if w := browsertest.Eval[int](t, ctx, `innerWidth`); int64(w) != size.w {
			t.Fatalf("the window is %d px wide, want %d", w, size.w)
		}
		if got := browsertest.Eval[string](t, ctx, `document.scrollingElement.scrollWidth + ' > ' + innerWidth`); browsertest.Eval[bool](t, ctx, `document.scrollingElement.scrollWidth > innerWidth`) {
			t.Errorf("at %s the page scrolls sideways: %s", name, got)
		}
		onScreen := fmt.Sprintf(`(() => { const b = document.querySelector('[data-actions=%q] [data-press="long"]').getBoundingClientRect();
			const c = document.querySelector('[data-consent=%q]').getBoundingClientRect();
			const q = document.getElementById('quests-panel').getBoundingClientRect();
			return scrollY === 0 && c.top >= 0 && c.top < q.top && b.top >= 0 && b.bottom <= innerHeight && b.right <= innerWidth; })()`, wait, wait)
		if !browsertest.Eval[bool](t, ctx, onScreen) {
			t.Errorf("at %s the consent's button is not on screen above the quests", name)
		}
		browsertest.ScreenshotView(t, ctx, "consent-"+name)
		if px := browsertest.Eval[float64](t, ctx, smallest); px < 11 {
			t.Errorf("at %s a node label is %.1f px", name, px)
		}
		if o := browsertest.Eval[[]string](t, ctx, overlaps); len(o) != 0 {
			t.Errorf("at %s captions overlap:\n%s", name, strings.Join(o, "\n"))
		}
		browsertest.Eval[bool](t, ctx, `document.querySelector('[data-graph]').scrollIntoView(), true`)
		browsertest.ScreenshotView(t, ctx, "graph-"+name)
		// + zooms the first graph in, ⤢ fits it again.
		zoom := `+document.querySelector('[data-graph]').dataset.zoom`
		z0 := browsertest.Eval[float64](t, ctx, zoom)
		run("zoom in", chromedp.Click(`.zoom button[aria-label="Zoom in"]`))
		if z := browsertest.Eval[float64](t, ctx, zoom); z <= z0 {
			t.Errorf("at %s + left the zoom at %v (was %v)", name, z, z0)
		}
		run("fit", chromedp.Click(`.zoom button[aria-label="Fit the width"]`))
		if z := browsertest.Eval[float64](t, ctx, zoom); z != z0 {
			t.Errorf("at %s ⤢ set the zoom to %v, want the fit %v", name, z, z0)
		}

		team := fmt.Sprintf(`[data-graph=%q] [data-folded="true"]`, v32.ID)
		// The Team may lie outside the phone's view of the graph (a drag
		// brings it): the test taps it where it is.
		browsertest.Eval[bool](t, ctx, fmt.Sprintf(`document.querySelector('%s').dispatchEvent(new MouseEvent('click', {bubbles: true})), true`, team))
		browsertest.WaitFor(t, ctx, "the Team's stages", fmt.Sprintf(`document.querySelector('[data-graph=%q] [data-folded="false"]') !== null`, v32.ID))
		if px := browsertest.Eval[float64](t, ctx, smallest); px < 11 {
			t.Errorf("at %s, a Team expanded, a node label is %.1f px (zooms %s)", name, px,
				browsertest.Eval[string](t, ctx, `[...document.querySelectorAll('[data-graph]')].map((g) => g.dataset.graph + ':' + g.dataset.zoom + ' ' + g.getAttribute('viewBox') + ' ' + g.getBoundingClientRect().width + 'x' + g.getBoundingClientRect().height).join(', ')`))
		}
		if o := browsertest.Eval[[]string](t, ctx, overlaps); len(o) != 0 {
			t.Errorf("at %s, a Team expanded, captions overlap:\n%s", name, strings.Join(o, "\n"))
		}
		if browsertest.Eval[bool](t, ctx, `document.scrollingElement.scrollWidth > innerWidth`) {
			t.Errorf("at %s, a Team expanded, the page scrolls sideways", name)
		}
		browsertest.Eval[bool](t, ctx, fmt.Sprintf(`document.querySelector('[data-graph=%q]').scrollIntoView(), true`, v32.ID))
		browsertest.ScreenshotView(t, ctx, "team-"+name)

		// The accepter that rejected: its decision, not the gate's PASS.
		reject := fx.BlockedStages[2]
		browsertest.Eval[bool](t, ctx, fmt.Sprintf(`document.querySelector('[data-graph=%q] [data-node=%q]').dispatchEvent(new MouseEvent('click', {bubbles: true})), true`, v32.ID, reject))
		browsertest.WaitFor(t, ctx, "the accepter's detail", fmt.Sprintf(`document.querySelector('[data-detail=%q]') !== null`, reject))
		if got := browsertest.Text(t, ctx, fmt.Sprintf(`[data-detail=%q] [data-decision]`, reject)); len(got) != 1 || got[0] != "reject" {
			t.Errorf("the accepter's detail says its decision is %q, want reject", got)
		}
		if got := browsertest.Text(t, ctx, fmt.Sprintf(`[data-detail=%q] [data-status-words]`, reject)); len(got) != 1 || !strings.Contains(got[0], "explored: done") {
			t.Errorf("the accepter's status reads %q, want explored in words", got)
		}
		if got := browsertest.Text(t, ctx, fmt.Sprintf(`[data-outcome=%q]`, reject)); len(got) != 1 || got[0] != "reject" {
			t.Errorf("the node table's outcome for the accepter reads %q, want reject", got)
		}
		browsertest.ScreenshotView(t, ctx, "accepter-"+name)
		run("close the detail", chromedp.Click(`#node .close button`))

		// One time format: local with its zone, UTC in the title.
		times := browsertest.Eval[[]string](t, ctx, `[...document.querySelectorAll('time')].map((e) => e.textContent + ' | ' + e.title)`)
		if len(times) == 0 {
			t.Errorf("at %s the page shows no times", name)
		}
		for _, tm := range times {
			text, title, _ := strings.Cut(tm, " | ")
			if !regexp.MustCompile(`\d\d:\d\d \S+$`).MatchString(text) || !regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$`).MatchString(title) {
				t.Errorf("a time reads %q (title %q), want HH:MM ZONE and UTC in the title", text, title)
			}
		}
		browsertest.Eval[bool](t, ctx, fmt.Sprintf(`document.querySelector('[data-graph=%q] [data-folded="false"]').dispatchEvent(new MouseEvent('click', {bubbles: true})), true`, v32.ID))
	}
}
