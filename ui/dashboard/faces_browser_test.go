package dashboard

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/questbox/questbox/engine/planttest"
	"github.com/questbox/questbox/ui/dashboard/browsertest"
)

// TestBrowserTeamsAndCouncil drives the page in headless Chromium on a
// phone-size window: a Team is one node with its stage strip until a tap
// expands it into its stage nodes and their edges (and a second folds it
// again); a council is drawn around its owner with each member's badge,
// vote and dissent; the new statuses have their colours.
func TestBrowserTeamsAndCouncil(t *testing.T) {
	ctx := browsertest.New(t)
	f := start(t, setup{})
	q := f.quest(nil)
	fx, err := planttest.V32(f.eng, q.ID)
	if err != nil {
		t.Fatal(err)
	}
	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(browsertest.Timeout(t, ctx), steps...); err != nil {
			browsertest.Screenshot(t, ctx, "failed")
			t.Fatalf("%s: %v", what, err)
		}
	}
	run("open the page", chromedp.Navigate(f.url))
	browsertest.WaitFor(t, ctx, "the login form", `!document.getElementById('login').hidden`)
	run("log in",
		chromedp.SendKeys("#password", testPassword),
		chromedp.Click(`#login-form button[type=submit]`))
	browsertest.WaitFor(t, ctx, "the first render", `document.body.dataset.ready === 'true'`)
	g := fmt.Sprintf(`[data-graph=%q]`, q.ID)
	team := fmt.Sprintf(`%s [data-node=%q]`, g, fx.Blocked)
	browsertest.WaitFor(t, ctx, "the folded Team", fmt.Sprintf(`document.querySelector('%s') !== null`, team))

	// Folded: the Team is one node with its strip; its stages are not drawn.
	if got := browsertest.Eval[string](t, ctx, fmt.Sprintf(`document.querySelector('%s').dataset.folded`, team)); got != "true" {
		t.Errorf("the Team's data-folded is %q, want true", got)
	}
	marks := browsertest.Eval[string](t, ctx, fmt.Sprintf(
		`[...document.querySelectorAll('%s [data-strip] [data-stage]')].map(c => c.dataset.stage + ':' + c.dataset.mark).join(' ')`, team))
	if want := "plan:done exec:done accept:rejected exec:done accept:rejected"; marks != want {
		t.Errorf("the strip reads %q, want %q", marks, want)
	}
	if got := browsertest.Text(t, ctx, team+` .rev`); len(got) != 1 || got[0] != "rev 2/2" {
		t.Errorf("the strip's revisions read %q, want rev 2/2", got)
	}
	for _, id := range fx.BlockedStages {
		if browsertest.Eval[bool](t, ctx, fmt.Sprintf(`document.querySelector('%s [data-node=%q]') !== null`, g, id)) {
			t.Errorf("stage %s is drawn while its Team is folded", id)
		}
	}
	if got := browsertest.Eval[string](t, ctx, fmt.Sprintf(`getComputedStyle(document.querySelector('%s circle')).fill`, team)); got != "rgb(248, 113, 113)" {
		t.Errorf("a team_blocked Team is filled %q, want the exhausted red rgb(248, 113, 113)", got)
	}
	// The council: a box around the owner, a badge and a vote per member.
	if !browsertest.Eval[bool](t, ctx, fmt.Sprintf(`document.querySelector('%s [data-council=%q] rect') !== null`, g, fx.Owner)) {
		t.Error("no council drawn around the owner")
	}
	votes := browsertest.Eval[string](t, ctx, fmt.Sprintf(
		`[...document.querySelectorAll('%s [data-member]')].map(v => v.dataset.member + ':' + v.querySelector('.badge-letter').textContent + ':' + (v.querySelector('.vote-text') || {textContent: '-'}).textContent).join(' ')`, g))
	if want := fmt.Sprintf("%s:R:… %s:J:pass %s:J:revise ⚑", fx.Reviewer, fx.Judges[0], fx.Judges[1]); votes != want {
		t.Errorf("votes read %q, want %q", votes, want)
	}
	title := browsertest.Eval[string](t, ctx, fmt.Sprintf(`document.querySelector('%s [data-node=%q] title').textContent`, g, fx.Judges[1]))
	if !strings.Contains(title, "votes revise") || !strings.Contains(title, planttest.Dissent) {
		t.Errorf("the dissenting judge's title (hover) is %q, want its vote and dissent", title)
	}
	browsertest.Screenshot(t, ctx, "team-folded-council")
	// A tap on a member opens it: its provider and its dissent.
	judge := fmt.Sprintf(`%s [data-node=%q]`, g, fx.Judges[1])
	run("open the dissenting judge", chromedp.Click(judge))
	browsertest.WaitFor(t, ctx, "the judge's detail", fmt.Sprintf(`document.querySelector('[data-detail=%q]') !== null`, fx.Judges[1]))
	detail := browsertest.Eval[string](t, ctx, fmt.Sprintf(`document.querySelector('[data-detail=%q]').textContent`, fx.Judges[1]))
	if !strings.Contains(detail, "provider") || !strings.Contains(detail, "gemini") || !strings.Contains(detail, planttest.Dissent) {
		t.Errorf("the judge's detail has no provider gemini or dissent: %q", detail)
	}
	browsertest.Screenshot(t, ctx, "member-detail")
	run("close the member", chromedp.Click(`#node .close button`))

	// A tap expands the Team: its stages and their edges are drawn.
	run("expand the Team", chromedp.Click(team))
	browsertest.WaitFor(t, ctx, "the Team's stages", fmt.Sprintf(`document.querySelector('%s [data-node=%q]') !== null`, g, fx.BlockedStages[4]))
	for _, id := range fx.BlockedStages {
		if !browsertest.Eval[bool](t, ctx, fmt.Sprintf(`document.querySelector('%s [data-node=%q]') !== null`, g, id)) {
			t.Errorf("stage %s is not drawn once its Team is expanded", id)
		}
	}
	labels := browsertest.Eval[string](t, ctx, fmt.Sprintf(`[...document.querySelectorAll('%s [data-stage-label]')].map(l => l.textContent).join(', ')`, g))
	if want := "plan ✓, exec ✓, accept ✗, exec ✓ (rev 1), accept ✗ (rev 1)"; labels != want {
		t.Errorf("the stages are labelled %q, want %q", labels, want)
	}
	rels := browsertest.Eval[string](t, ctx, fmt.Sprintf(
		`[...new Set([...document.querySelectorAll('%s [data-relation]')].map(e => e.dataset.relation))].sort().join(' ')`, g))
	for _, want := range []string{"stages_into", "makes_plan", "executes", "rejects_to"} {
		if !strings.Contains(rels, want) {
			t.Errorf("expanded, the graph has edges %q, no %s", rels, want)
		}
	}
	if got := browsertest.Eval[string](t, ctx, fmt.Sprintf(`document.querySelector('%s').getAttribute('aria-expanded')`, team)); got != "true" {
		t.Errorf("aria-expanded %q after the tap, want true", got)
	}
	// The other Team stays folded.
	if browsertest.Eval[bool](t, ctx, fmt.Sprintf(`document.querySelector('%s [data-node=%q]') !== null`, g, fx.RevisingStages[0])) {
		t.Error("expanding one Team expanded the other")
	}
	browsertest.Screenshot(t, ctx, "team-expanded")

	run("fold the Team again", chromedp.Click(team))
	browsertest.WaitFor(t, ctx, "the Team folded again", fmt.Sprintf(`document.querySelector('%s [data-node=%q]') === null`, g, fx.BlockedStages[4]))
}
