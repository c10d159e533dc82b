package dashboard

import (
	"fmt"
	"slices"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/questbox/questbox/ui/api"
	"github.com/questbox/questbox/ui/dashboard/browsertest"
)

// TestBrowser drives the page in headless Chromium: the login, the graph,
// a node's facts and feedback exactly as the API (and so `questbox quest
// show`) gives them, and an event that changes the page without a reload.
func TestBrowser(t *testing.T) {
	ctx := browsertest.New(t)
	f := start(t, setup{})
	f.quest(nil, "alpha", "beta", "gamma")
	f.submit("q1", "n1", []byte("no JSON here"))
	f.submit("q1", "n2", answer("promising", "beta reads every sample invoice.", "try beta on receipts"))

	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(browsertest.Timeout(t, ctx), steps...); err != nil {
			browsertest.Screenshot(t, ctx, "failed")
			t.Fatalf("%s: %v", what, err)
		}
	}
	run("open the page", chromedp.Navigate(f.url))
	browsertest.WaitFor(t, ctx, "the login form", `!document.getElementById('login').hidden`)
	if n := browsertest.Eval[int](t, ctx, `document.querySelectorAll('[data-graph]').length`); n != 0 {
		t.Errorf("logged out, the page shows %d graphs", n)
	}
	run("log in",
		chromedp.SendKeys("#password", testPassword),
		chromedp.Click(`#login-form button[type=submit]`))
	browsertest.WaitFor(t, ctx, "the first render", `document.body.dataset.ready === 'true'`)

	nodes, _ := f.eng.Nodes("q1")
	browsertest.WaitFor(t, ctx, "the graph", fmt.Sprintf(`document.querySelectorAll('[data-graph="q1"] [data-node]').length === %d`, len(nodes)))
	for _, n := range nodes {
		if got := browsertest.Eval[string](t, ctx, fmt.Sprintf(`document.querySelector('[data-graph="q1"] [data-node="%s"]').dataset.status`, n.ID)); got != string(n.Status) {
			t.Errorf("node %s shows %s, want %s", n.ID, got, n.Status)
		}
	}
	if got := browsertest.Eval[string](t, ctx, `document.querySelector('[data-node="n4"]').getAttribute('class')`); got != "node proposed" {
		t.Errorf("a proposed node's class is %q", got)
	}
	browsertest.Screenshot(t, ctx, "graph")

	// A node's facts and feedback are the API's text, byte for byte.
	run("open n1", chromedp.Click(`[data-graph="q1"] [data-node="n1"]`))
	browsertest.WaitFor(t, ctx, "n1's detail", `document.querySelector('[data-detail="n1"]') !== null`)
	n1, err := f.eng.Node("n1")
	if err != nil {
		t.Fatal(err)
	}
	v := api.NodeView(n1)
	var want []string
	for _, fct := range v.Facts {
		want = append(want, fct.Text)
	}
	if got := browsertest.Text(t, ctx, `[data-detail="n1"] .node-facts pre.fact`); len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("facts on the page:\n%q\nwant\n%q", got, want)
	}
	fb := browsertest.Text(t, ctx, `[data-detail="n1"] .node-facts pre.feedback`)
	if v.FeedbackAdds && (len(fb) != 1 || fb[0] != v.Feedback) || !v.FeedbackAdds && len(fb) != 0 {
		t.Errorf("feedback on the page %q, want %q (adds %v)", fb, v.Feedback, v.FeedbackAdds)
	}
	browsertest.Screenshot(t, ctx, "node")
	run("close the node", chromedp.Click(`#node .close button`))

	// A change on the box shows without a reload.
	browsertest.Eval[bool](t, ctx, `window.notReloaded = true`)
	if _, err := f.eng.AbortNode("n3", "from the test"); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, ctx, "n3 aborted on the page", `document.querySelector('[data-node="n3"]').dataset.status === 'aborted'`)
	browsertest.WaitFor(t, ctx, "the event in the log", `[...document.querySelectorAll('#events li')].some(li => li.textContent.includes('n3') && li.textContent.includes('aborted'))`)
	if !browsertest.Eval[bool](t, ctx, `window.notReloaded === true`) {
		t.Error("the page reloaded")
	}
	browsertest.Screenshot(t, ctx, "live")
}
