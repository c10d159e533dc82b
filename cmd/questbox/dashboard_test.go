package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/questbox/questbox/internal/daemon/daemontest"
	"github.com/questbox/questbox/ui/dashboard/browsertest"
)

// freeAddr is a loopback address with a port free now, for a daemon that
// must come back on the same one.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// generatedPassword is how a generated dashboard password looks.
var generatedPassword = regexp.MustCompile(`^[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}$`)

// firstPassword is the dashboard password the daemon generated at its
// first start on data: in its owner-only first-password file, and nowhere
// in its output (an agent may read that; log, when not nil, is it).
func firstPassword(t *testing.T, data string, log ...fmt.Stringer) string {
	t.Helper()
	file := filepath.Join(data, "dashboard.first-password")
	var pw string
	waitFor(t, "the first-password file", func() bool {
		b, err := os.ReadFile(file)
		pw = strings.TrimSpace(string(b))
		return err == nil && pw != ""
	})
	if !generatedPassword.MatchString(pw) {
		t.Fatalf("%s holds %q, not a generated password", file, pw)
	}
	for _, f := range []string{file, filepath.Join(data, "dashboard.password")} {
		if fi, err := os.Stat(f); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v, want mode 0600", f, fi.Mode(), err)
		}
	}
	for _, l := range log {
		if strings.Contains(l.String(), pw) {
			t.Errorf("the generated password is in the daemon's output:\n%s", l)
		}
	}
	return pw
}

// TestDashboard is the dashboard issue's acceptance on a real daemon in
// headless Chromium: the URL is printed, the password is printed once,
// the page shows a node's facts and feedback exactly as `quest show` does,
// the virtual button approves a consent as `device press --hold 2s` does,
// and after the daemon is killed and started again the open page
// reconnects and catches up on what changed meanwhile.
func TestDashboard(t *testing.T) {
	ctx := browsertest.New(t)
	data := daemontest.ShortDir(t)
	addr := freeAddr(t)
	cmd := func(args ...string) []string { return append(args, "--data", data) }
	dm := startDaemon(t, data, "--gpio", "sim", "--listen", addr)
	url := "http://" + addr + "/"
	waitFor(t, "the dashboard URL", func() bool { return strings.Contains(dm.stdout.String(), "dashboard: "+url) })
	password := firstPassword(t, data, dm.stdout, dm.stderr)
	if !strings.Contains(dm.stderr.String(), "cat "+filepath.Join(data, "dashboard.first-password")) {
		t.Errorf("the log does not say where the password is:\n%s", dm.stderr.String())
	}

	must(t, 0, "", cmd("quest", "new", "cp", "--direction", "check with a human", "--provider", "external", "--checkpoint", "scout")...)
	must(t, 0, "", cmd("scan", "q1", "alpha first", "beta second")...)
	must(t, 4, answer("promising", "alpha works on all twenty sample invoices."), cmd("submit", "q1", "--node", "n1")...)
	must(t, 3, "no JSON at all", cmd("submit", "q1", "--node", "n2")...)

	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(browsertest.Timeout(t, ctx), steps...); err != nil {
			browsertest.Screenshot(t, ctx, "failed")
			t.Fatalf("%s: %v", what, err)
		}
	}
	run("open the dashboard", chromedp.Navigate(url))
	browsertest.WaitFor(t, ctx, "the login form", `!document.getElementById('login').hidden`)
	run("log in", chromedp.SendKeys("#password", password), chromedp.Click(`#login-form button[type=submit]`))
	browsertest.WaitFor(t, ctx, "the first render", `document.body.dataset.ready === 'true'`)
	browsertest.WaitFor(t, ctx, "the consent queue", `document.querySelector('[data-consent="n1"]') !== null`)
	browsertest.WaitFor(t, ctx, "the LED mirror", `document.querySelector('#leds .amber').dataset.pattern === 'blink 2Hz'`)
	browsertest.Screenshot(t, ctx, "consent")

	// n2's facts and feedback, as `quest show` prints them.
	show := must(t, 0, "", cmd("quest", "show", "q1")...).stdout
	facts, feedback := showFacts(t, show, "n2")
	run("open n2", chromedp.Click(`[data-graph="q1"] [data-node="n2"]`))
	browsertest.WaitFor(t, ctx, "n2's detail", `document.querySelector('[data-detail="n2"]') !== null`)
	if got := browsertest.Text(t, ctx, `[data-detail="n2"] .node-facts pre.fact`); strings.Join(got, "\n") != strings.Join(facts, "\n") || len(facts) == 0 {
		t.Errorf("facts on the page:\n%q\n`quest show`:\n%q", got, facts)
	}
	fb := browsertest.Text(t, ctx, `[data-detail="n2"] .node-facts pre.feedback`)
	if feedback == "" || len(fb) != 1 || strings.TrimSuffix(fb[0], "\n")+"\n" != feedback {
		t.Errorf("feedback on the page %q, `quest show` %q", fb, feedback)
	}
	run("close n2", chromedp.Click(`#node .close button`))

	// The virtual button approves, as `questbox device press --hold 2s`:
	// the consent card's, on screen beside the request (the Box tab's own
	// is out of sight on the Quests tab).
	run("hold the virtual button", chromedp.Click(`button.approve[data-press="long"]`))
	browsertest.WaitFor(t, ctx, "the press's outcome", `document.getElementById('press-result').textContent === 'long (2s): approved n1'`)
	browsertest.WaitFor(t, ctx, "the empty consent queue", `document.getElementById('consents').hidden`)
	if n1 := nodeOf(t, showQuest(t, data, "q1"), "n1"); n1.Status != "growing" && n1.Status != "explored" {
		t.Errorf("after the virtual press n1 is %s", n1.Status)
	}
	if !strings.Contains(dm.stdout.String(), "q1 n1 consent granted  (consent by button)") {
		waitFor(t, "the consent event", func() bool { return strings.Contains(dm.stdout.String(), "q1 n1 consent granted  (consent by button)") })
	}

	// The daemon goes away; the page says so, and comes back by itself.
	browsertest.Eval[bool](t, ctx, `window.notReloaded = true`)
	if err := dm.stop(); err != nil {
		t.Fatalf("run: %v", err)
	}
	browsertest.WaitFor(t, ctx, "the page to notice", `document.getElementById('conn').dataset.state === 'reconnecting'`)
	must(t, 0, "", cmd("scan", "q1", "gamma while the daemon was away")...)
	startDaemon(t, data, "--gpio", "sim", "--listen", addr)
	browsertest.WaitFor(t, ctx, "the page to catch up", `document.querySelector('[data-graph="q1"] [data-node="n3"]') !== null`)
	browsertest.WaitFor(t, ctx, "the live state", `document.getElementById('conn').dataset.state === 'live'`)
	browsertest.WaitFor(t, ctx, "the missed event in the log", `[...document.querySelectorAll('#events li')].some(li => li.textContent.includes('n3') && li.textContent.includes('new → pending'))`)
	if !browsertest.Eval[bool](t, ctx, `window.notReloaded === true`) {
		t.Error("the page reloaded")
	}
	browsertest.Screenshot(t, ctx, "reconnected")
}

// showFacts cuts a node's fact lines and its feedback block out of
// `quest show`'s output (see writeFacts).
func showFacts(t *testing.T, show, node string) (facts []string, feedback string) {
	t.Helper()
	_, rest, ok := strings.Cut(show, "\n"+node+" (")
	if !ok {
		t.Fatalf("quest show has no %s:\n%s", node, show)
	}
	lines := strings.Split(rest, "\n")[1:]
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case l == "  feedback:":
			var b strings.Builder
			for i++; i < len(lines) && !strings.HasPrefix(lines[i], "  last attempt"); i++ {
				fmt.Fprintf(&b, "%s\n", strings.TrimPrefix(lines[i], "    "))
			}
			return facts, b.String()
		case strings.HasPrefix(l, "  last attempt"), l == "":
			return facts, ""
		default:
			facts = append(facts, strings.TrimPrefix(l, "  "))
		}
	}
	return facts, ""
}

var urlLine = regexp.MustCompile(`dashboard: (http://127\.0\.0\.1:\d+/)`)

// TestPasswordVerb: `questbox password` with a daemon running (which
// notices: the old password and every session stop working) and without.
func TestPasswordVerb(t *testing.T) {
	data := daemontest.ShortDir(t)
	dm := startDaemon(t, data)
	var url string
	waitFor(t, "the dashboard URL", func() bool {
		m := urlLine.FindStringSubmatch(dm.stdout.String())
		if m != nil {
			url = m[1]
		}
		return m != nil
	})
	old := firstPassword(t, data, dm.stdout, dm.stderr)
	login := func(pw string) (int, []*http.Cookie) {
		t.Helper()
		body, _ := json.Marshal(map[string]string{"password": pw})
		resp, err := http.Post(url+"login", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Cookies()
	}
	get := func(cookies []*http.Cookie) int {
		t.Helper()
		req, _ := http.NewRequest("GET", url+"api/quests", nil)
		for _, c := range cookies {
			req.AddCookie(c)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	code, session := login(old)
	if code != http.StatusOK || get(session) != http.StatusOK {
		t.Fatalf("login with the generated password: %d", code)
	}
	r := must(t, 0, "a-password-of-my-own\n", "password", "--stdin", "--data", data)
	if strings.Contains(r.stdout, "a-password-of-my-own") || !strings.Contains(r.stdout, "every dashboard session has ended") {
		t.Errorf("password --stdin printed %q", r.stdout)
	}
	if _, err := os.Stat(filepath.Join(data, "dashboard.first-password")); !os.IsNotExist(err) {
		t.Errorf("the first-password file after a new password: %v, want it removed", err)
	}
	if got := get(session); got != http.StatusUnauthorized {
		t.Errorf("a session from before the reset: %d, want 401", got)
	}
	if code, _ := login(old); code != http.StatusUnauthorized {
		t.Errorf("the old password after the reset: %d, want 401", code)
	}
	if code, _ := login("a-password-of-my-own"); code != http.StatusOK {
		t.Errorf("the new password: %d", code)
	}
	if strings.Count(dm.stderr.String(), "dashboard password generated") != 1 {
		t.Errorf("the password was generated more than once:\n%s", dm.stderr.String())
	}
	if err := dm.stop(); err != nil {
		t.Fatal(err)
	}

	// Without a daemon: a generated one, printed once, in a 0600 file.
	r = must(t, 0, "", "password", "--data", data)
	m := regexp.MustCompile(`new dashboard password: (\S+)\n`).FindStringSubmatch(r.stdout)
	if m == nil || len(m[1]) != 19 {
		t.Fatalf("password printed %q", r.stdout)
	}
	fi, err := os.Stat(filepath.Join(data, "dashboard.password"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("password file: %v %v, want mode 0600", fi, err)
	}
	must(t, 1, "short\n", "password", "--stdin", "--data", data)
	dm = startDaemon(t, data)
	waitFor(t, "the dashboard URL", func() bool { return urlLine.MatchString(dm.stdout.String()) })
	if strings.Contains(dm.stderr.String(), "dashboard password generated") {
		t.Error("a daemon generated a password although one was set")
	}
}
