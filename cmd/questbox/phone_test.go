package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/questbox/questbox/internal/daemon/daemontest"
	"github.com/questbox/questbox/ui/api"
	"github.com/questbox/questbox/ui/dashboard/browsertest"
)

// TestQuestFromThePhone is the dashboard's quest creation (docs/design.md,
// "The dashboard and the API") on a real daemon in headless Chromium: the
// Preset select offers the CLI's presets and fills the fields as --preset
// does; wrong values in the new-quest form (a malformed council, council
// providers, role providers, max revisions without Teams, a missing project)
// get the message the CLI prints for the same value; the form creates a
// council quest (preset council, the demo playing its members); the quest's
// card seeds two hypotheses; the page shows it run; a node opens its runs and
// a run its log, live while the agent runs and to its end; the export
// downloads, and the CLI's export then has nothing left (one journal); the
// owner's turn is the council's, its members' nodes on the page; the teams
// preset creates a Teams quest.
func TestQuestFromThePhone(t *testing.T) {
	ctx := browsertest.New(t)
	dir := daemontest.ShortDir(t)
	data := filepath.Join(dir, "data")
	out := agentOut(t)
	fifo, once := filepath.Join(dir, "go-on"), filepath.Join(out, "once")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// The first run writes a line, waits for the test, and writes another;
	// every run answers a dead end (a PASS that aborts its node: a terminal node to export).
	// Each answer is its own (a fresh uuid in its evidence), so the
	// quest makes progress and reaches its owner's turn: the council.
	dead, _ := json.Marshal(map[string]any{"verdict": "dead", "evidence": "checked on sample PID; it does not work.", "citations": []any{}, "new_directions": []any{}})
	script := "cat >/dev/null; if [ ! -e " + once + " ]; then touch " + once + "; echo 'working on it' >&2; read x < " + fifo +
		"; echo 'nearly there' >&2; fi; printf '" + strings.Replace(string(dead), "PID", "%s", 1) + "' $(cat /proc/sys/kernel/random/uuid)"
	argv, _ := json.Marshal([]string{"sh", "-c", script})
	cfg := runsConfig(t, dir, "[providers.steps]\ntype = \"command\"\ntimeout = \"1h\"\nwrite = [\""+out+"\"]\nargv = "+string(argv)+"\n")
	addr := freeAddr(t)
	dm := startDaemon(t, data, "--config", cfg, "--listen", addr, "--tick", "1s")
	url := "http://" + addr + "/"
	waitFor(t, "the dashboard URL", func() bool { return strings.Contains(dm.stdout.String(), "dashboard: "+url) })
	password := firstPassword(t, data)
	downloads := t.TempDir()

	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(browsertest.Timeout(t, ctx), steps...); err != nil {
			browsertest.Screenshot(t, ctx, "failed")
			t.Fatalf("%s: %v", what, err)
		}
	}
	if _, err := chromedp.CallBrowser(browsertest.Timeout(t, ctx), browser.SetDownloadBehavior,
		browser.SetDownloadBehaviorParams{Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: downloads}); err != nil {
		t.Fatalf("allow downloads: %v", err)
	}
	run("open the dashboard", chromedp.Navigate(url))
	browsertest.WaitFor(t, ctx, "the login form", `!document.getElementById('login').hidden`)
	run("log in", chromedp.SendKeys("#password", password), chromedp.Click(`#login-form button[type=submit]`))
	browsertest.WaitFor(t, ctx, "the new-quest form", `!document.getElementById('new-quest').hidden`)
	// The presets are the CLI's (api.Presets, served by GET /api/presets).
	browsertest.WaitFor(t, ctx, "the presets", `document.querySelectorAll('#nq-preset option').length > 1`)
	// And the box's choices, which the preset's mode is one of.
	browsertest.WaitFor(t, ctx, "the choices", `document.querySelectorAll('#nq-mode option').length > 1`)
	if got := browsertest.Eval[[]string](t, ctx, `[...document.querySelectorAll('#nq-preset option')].map(o => o.value)`); strings.Join(got, ",") != "none,council,teams" {
		t.Errorf("presets: %q, want none, council, teams", got)
	}
	preset := func(name string) {
		t.Helper()
		browsertest.Eval[bool](t, ctx, `(s => (s.value = '`+name+`', s.dispatchEvent(new Event('change')), true))(document.getElementById('nq-preset'))`)
	}
	preset("council")
	run("open the options", chromedp.Click(`#new-quest-form details summary`))
	filled := `['mode', 'council', 'teams'].map(k => (e => e.type === 'checkbox' ? String(e.checked) : e.value)(document.getElementById('nq-' + k))).join(' ')`
	if got := browsertest.Eval[string](t, ctx, filled); got != "team reviewer:2,judge:1 false" {
		t.Errorf("the council preset fills mode, council, teams with %q, want the CLI's team reviewer:2,judge:1 false", got)
	}
	preset("teams")
	if got := browsertest.Eval[string](t, ctx, filled); got != "team  true" {
		t.Errorf("the teams preset fills mode, council, teams with %q, want team, no council, teams", got)
	}
	preset("council")

	// Wrong values: the CLI's message, word for word.
	cliSays := func(args ...string) string {
		t.Helper()
		args = append([]string{"quest", "new", "phone", "--direction", "read invoices", "--provider", "steps", "--config", cfg, "--data", data}, args...)
		return strings.TrimSpace(strings.TrimPrefix(must(t, 1, "", args...).stderr, "questbox: "))
	}
	formSays := func(what string) string {
		t.Helper()
		browsertest.Eval[bool](t, ctx, `document.getElementById('nq-result').className = '', true`)
		run(what, chromedp.Click(`#new-quest-form button[type=submit]`))
		browsertest.WaitFor(t, ctx, "the refusal", `document.getElementById('nq-result').className === 'error'`)
		return browsertest.Eval[string](t, ctx, `document.getElementById('nq-result').textContent`)
	}
	// The provider is a select of the box's providers (GET /api/choices).
	browsertest.WaitFor(t, ctx, "the provider steps offered", `[...document.querySelectorAll('#nq-provider option')].some(o => o.value === 'steps')`)
	run("fill the form",
		chromedp.SendKeys("#nq-name", "phone"),
		chromedp.SendKeys("#nq-direction", "read invoices"),
		chromedp.SetValue("#nq-provider", "steps"))
	setField := func(id, v string) {
		browsertest.Eval[bool](t, ctx, `document.getElementById('nq-`+id+`').value = `+strconv.Quote(v)+`, true`)
	}
	for _, c := range []struct{ field, value string }{
		{"council", "reviewer:x"},
		{"council_providers", "reviewer"},
		{"role_providers", "owner"},
		{"max_revisions", "3"},
	} {
		setField(c.field, c.value)
		flag := map[string]string{"council": "--council", "council_providers": "--council-provider", "role_providers": "--role-provider", "max_revisions": "--max-revisions"}[c.field]
		want := cliSays("--preset", "council", flag, c.value)
		if got := formSays("submit " + c.field + " " + c.value); got != want {
			t.Errorf("%s %q: the form says\n%q\nthe CLI says\n%q", c.field, c.value, got, want)
		}
		setField(c.field, "")
	}
	setField("council", "reviewer:2,judge:1")
	missing := filepath.Join(dir, "no-such-project")
	want := cliSays("--preset", "council", "--project", missing)
	run("a project that does not exist", chromedp.SendKeys("#nq-project", missing))
	if got := formSays("submit the missing project"); got != want {
		t.Errorf("the form says\n%q\nthe CLI says\n%q", got, want)
	}

	// The demo plays the council's members.
	setField("council_providers", "reviewer=demo,judge=demo")
	browsertest.Eval[bool](t, ctx, `document.getElementById('nq-project').value = '', true`)
	browsertest.Eval[bool](t, ctx, `(r => (r.textContent = '', r.className = 'hint', true))(document.getElementById('nq-result'))`)
	browsertest.ScreenshotOf(t, ctx, "#new-quest", "form")
	run("create the quest", chromedp.Click(`#new-quest-form button[type=submit]`))
	browsertest.WaitFor(t, ctx, "the form's answer", `(r => r.dataset.created || r.className === 'error')(document.getElementById('nq-result'))`)
	if got := browsertest.Eval[string](t, ctx, `document.getElementById('nq-result').dataset.created || document.getElementById('nq-result').textContent`); got != "q1" {
		t.Fatalf("the form created %q, want q1", got)
	}
	browsertest.WaitFor(t, ctx, "its card", `document.querySelector('[data-seed="q1"]') !== null`)
	var q api.Quest
	if err := json.Unmarshal([]byte(must(t, 0, "", "quest", "show", "q1", "--json", "--data", data).stdout), &struct{ Quest any }{&q}); err != nil {
		t.Fatal(err)
	}
	if q.Mode != "team" || q.Provider != "steps" || q.Council == nil {
		t.Errorf("the quest from the form: %+v, want a council quest in team mode on steps", q)
	}

	run("seed two hypotheses",
		chromedp.SendKeys(`[data-seed="q1"]`, "tesseract jpn\nmanga-ocr"),
		chromedp.Click(`[data-seed-button="q1"]`))
	browsertest.WaitFor(t, ctx, "the seeding", `document.querySelector('[data-seed-result="q1"]').textContent === 'Added 2.'`)
	browsertest.WaitFor(t, ctx, "the seeded nodes in the graph", `document.querySelectorAll('[data-graph="q1"] [data-node]').length >= 3`)

	// The root runs (its agent waits on the FIFO): its log, live.
	browsertest.WaitFor(t, ctx, "n1 running", `document.querySelector('[data-graph="q1"] [data-node="n1"]').dataset.status === 'running'`)
	run("open n1", chromedp.Click(`[data-graph="q1"] [data-node="n1"]`))
	browsertest.WaitFor(t, ctx, "n1's runs", `document.querySelector('[data-runs="n1"] [data-open-log]') !== null`)
	run("open its live log", chromedp.Click(`[data-runs="n1"] [data-open-log]`))
	browsertest.WaitFor(t, ctx, "the first line, live", `(document.querySelector('pre[data-log]')?.textContent || '').includes('working on it')`)
	if browsertest.Eval[bool](t, ctx, `document.querySelector('pre[data-log]').textContent.includes('nearly there')`) {
		t.Fatal("the page shows a line the agent has not written")
	}
	browsertest.Screenshot(t, ctx, "live-log")
	f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("go\n")
	f.Close()
	browsertest.WaitFor(t, ctx, "the run's end, live", `document.querySelector('pre[data-log]').dataset.done === 'true'`)
	page := browsertest.Eval[string](t, ctx, `document.querySelector('pre[data-log]').textContent`)
	if !strings.Contains(page, "nearly there") || !strings.Contains(page, "end: answered") {
		t.Errorf("the live log ends:\n%s", page)
	}
	if cliLog := must(t, 0, "", "logs", "n1", "--data", data).stdout; cliLog != page {
		t.Errorf("the page's log differs from `questbox logs n1`:\n%s\n---\n%s", page, cliLog)
	}
	run("close the log", chromedp.Click(`#log .close button`), chromedp.Click(`#node .close button`))

	// The seeded nodes run too; a terminal node is exported.
	browsertest.WaitFor(t, ctx, "the seeded nodes' dead ends", `['n2', 'n3'].every(id => document.querySelector('[data-graph="q1"] [data-node="' + id + '"]').dataset.status === 'aborted')`)
	run("download the export", chromedp.Click(`[data-export="q1"]`))
	browsertest.WaitFor(t, ctx, "the export acknowledged", `document.querySelector('[data-seed-result="q1"]').textContent.startsWith('Exported')`)
	file := filepath.Join(downloads, "questbox-q1.jsonl")
	waitFor(t, "the downloaded file", func() bool { _, err := os.Stat(file); return err == nil })
	body, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := nodeLines(strings.Split(strings.TrimSpace(string(body)), "\n"))
	if _, err := api.VerifyExport(bytes.NewReader(body), ""); err != nil {
		t.Errorf("the downloaded export does not verify: %v", err)
	}
	nodes := map[string]bool{}
	for _, l := range lines {
		var rec struct{ Quest, ID string }
		if err := json.Unmarshal([]byte(l), &rec); err != nil || rec.Quest != "q1" {
			t.Fatalf("a downloaded line: %q (%v)", l, err)
		}
		nodes[rec.ID] = true
	}
	if !nodes["n2"] || !nodes["n3"] || len(nodes) != len(lines) {
		t.Errorf("downloaded %d lines for %v, want n2 and n3 once each", len(lines), nodes)
	}
	// The same journal as the CLI's export: what the page took is gone.
	again := must(t, 0, "", "export", "q1", "--data", data).stdout
	for id := range nodes {
		if strings.Contains(again, fmt.Sprintf(`"id":%q`, id)) {
			t.Errorf("`questbox export` after the download repeats %s", id)
		}
	}
	// The owner's turn is the council, played by the demo; the page shows
	// its members' nodes.
	browsertest.WaitFor(t, ctx, "the council's members on the page",
		`document.querySelectorAll('[data-graph="q1"] [data-node]').length >= 6`)
	waitFor(t, "two reviewers and a judge done", func() bool {
		var d api.QuestDetail
		if json.Unmarshal([]byte(must(t, 0, "", "quest", "show", "q1", "--json", "--data", data).stdout), &d) != nil {
			return false
		}
		done := map[string]int{}
		for _, n := range d.Nodes {
			if n.Status != api.NodePending && n.Status != api.NodeRunning && n.Status != api.NodeDeferred {
				done[n.Role]++
			}
		}
		return done["reviewer"] >= 2 && done["judge"] >= 1
	})
	browsertest.Screenshot(t, ctx, "exported")

	// The teams preset: a quest whose owner dispatches Teams.
	preset("teams")
	run("a Teams quest", chromedp.SendKeys("#nq-name", "teams"), chromedp.SendKeys("#nq-direction", "read receipts"))
	setField("provider", "demo")
	browsertest.Eval[bool](t, ctx, `(r => (r.textContent = '', delete r.dataset.created, true))(document.getElementById('nq-result'))`)
	run("create it", chromedp.Click(`#new-quest-form button[type=submit]`))
	browsertest.WaitFor(t, ctx, "the form's answer", `(r => r.dataset.created || r.className === 'error')(document.getElementById('nq-result'))`)
	if got := browsertest.Eval[string](t, ctx, `document.getElementById('nq-result').dataset.created || document.getElementById('nq-result').textContent`); got != "q2" {
		t.Fatalf("the form created %q, want q2", got)
	}
	var q2 api.Quest
	if err := json.Unmarshal([]byte(must(t, 0, "", "quest", "show", "q2", "--json", "--data", data).stdout), &struct{ Quest any }{&q2}); err != nil {
		t.Fatal(err)
	}
	if q2.Mode != "team" || !q2.Teams || q2.Council != nil {
		t.Errorf("the quest of the teams preset: %+v, want Teams in team mode, no council", q2)
	}
}
