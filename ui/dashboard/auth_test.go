package dashboard

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/questbox/questbox/internal/config"
)

// TestReading: with reading protected, every read needs a session or the
// password; the page itself and /healthz are public.
func TestReading(t *testing.T) {
	f := start(t, setup{})
	f.quest(nil, "alpha")
	anon := f.browser()
	for _, path := range []string{"/api/quests", "/api/quests/q1", "/api/nodes/n1", "/api/events?since=0", "/api/consents", "/metrics", "/ws"} {
		r := anon.do("GET", path, nil)
		if r.status != http.StatusUnauthorized || r.errorCode() != "unauthorized" {
			t.Errorf("GET %s without a session: %d %s, want 401 unauthorized", path, r.status, r.body)
		}
	}
	for _, path := range []string{"/", "/app.js", "/app.css", "/healthz", "/session"} {
		if r := anon.do("GET", path, nil); r.status != http.StatusOK {
			t.Errorf("GET %s: %d, want 200", path, r.status)
		}
	}
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("prometheus:"+testPassword))
	if r := anon.do("GET", "/metrics", nil, "Authorization", basic); r.status != http.StatusOK || !strings.Contains(string(r.body), "questbox_store_commits_total") {
		t.Errorf("GET /metrics with basic auth: %d", r.status)
	}
	if r := anon.do("GET", "/api/quests", nil, "Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("x:wrong-password"))); r.status != http.StatusUnauthorized || r.header.Get("WWW-Authenticate") == "" {
		t.Errorf("GET with a wrong basic password: %d %v", r.status, r.header)
	}
	b := f.browser()
	if r := b.login(testPassword); r.status != http.StatusOK {
		t.Fatalf("login: %d %s", r.status, r.body)
	}
	if r := b.do("GET", "/api/quests/q1", nil); r.status != http.StatusOK || !strings.Contains(string(r.body), `"name": "ocr"`) {
		t.Errorf("GET /api/quests/q1 logged in: %d %s", r.status, r.body)
	}

	pub := start(t, setup{cfg: config.Dashboard{Read: config.ReadPublic}})
	pub.quest(nil, "alpha")
	if r := pub.browser().do("GET", "/api/quests", nil); r.status != http.StatusOK {
		t.Errorf("public reading: GET /api/quests: %d", r.status)
	}
	if r := pub.browser().do("POST", "/api/quests/q1/stop", struct{}{}, "Origin", pub.origin); r.status != http.StatusUnauthorized {
		t.Errorf("public reading: an anonymous change: %d, want 401", r.status)
	}
}

// TestChanges: a change needs a session, our Origin and the session's CSRF
// token, and only the changes the dashboard offers are served.
func TestChanges(t *testing.T) {
	f := start(t, setup{})
	f.quest(nil, "alpha", "beta")
	anon := f.browser()
	if r := anon.do("POST", "/api/quests/q1/stop", struct{}{}, "Origin", f.origin); r.status != http.StatusUnauthorized {
		t.Errorf("unauthenticated POST: %d, want 401", r.status)
	}
	b := f.browser()
	b.login(testPassword)
	for _, tc := range []struct {
		name   string
		header []string
		want   int
	}{
		{"no CSRF token", []string{"Origin", f.origin}, http.StatusForbidden},
		{"a wrong CSRF token", []string{"Origin", f.origin, csrfHeader, "x" + b.csrf}, http.StatusForbidden},
		{"another site's page", []string{"Origin", "http://evil.example", csrfHeader, b.csrf}, http.StatusForbidden},
		{"another site's referer", []string{"Referer", "http://evil.example/x", csrfHeader, b.csrf}, http.StatusForbidden},
		{"a sandboxed page", []string{"Origin", "null", csrfHeader, b.csrf}, http.StatusForbidden},
	} {
		if r := b.do("POST", "/api/quests/q1/stop", struct{}{}, tc.header...); r.status != tc.want || r.errorCode() != "forbidden" {
			t.Errorf("%s: %d %s, want %d", tc.name, r.status, r.body, tc.want)
		}
	}
	if q, _ := f.eng.Quest("q1"); q.Status != "active" {
		t.Fatalf("a refused change changed the quest: %s", q.Status)
	}
	if r := b.change("/api/quests/q1/stop", nil); r.status != http.StatusOK || !strings.Contains(string(r.body), `"status": "stopped"`) ||
		!strings.Contains(string(r.body), `"reason": "stopped via dashboard"`) {
		t.Errorf("stop: %d %s, want stopped via dashboard", r.status, r.body)
	}
	if r := b.change("/api/quests/q1/resume", nil); r.status != http.StatusOK {
		t.Errorf("resume: %d %s", r.status, r.body)
	}
	if r := b.change("/api/nodes/n2/abort", map[string]string{"reason": "from the test"}); r.status != http.StatusOK || !strings.Contains(string(r.body), `"status": "aborted"`) {
		t.Errorf("abort: %d %s", r.status, r.body)
	}
	// Without a browser's Origin (curl), the session and token suffice.
	if r := b.do("POST", "/api/quests/q1/stop", struct{}{}, csrfHeader, b.csrf); r.status != http.StatusOK {
		t.Errorf("stop without Origin: %d %s", r.status, r.body)
	}
	// Quests from the phone: create, seed and export, behind the
	// same session, CSRF token and Origin checks.
	for _, path := range []string{"/api/quests", "/api/quests/q1/scan", "/api/quests/q1/export", "/api/quests/q1/export/ack"} {
		if r := anon.do("POST", path, struct{}{}, "Origin", f.origin); r.status != http.StatusUnauthorized {
			t.Errorf("unauthenticated POST %s: %d, want 401", path, r.status)
		}
		if r := b.do("POST", path, struct{}{}, "Origin", f.origin); r.status != http.StatusForbidden {
			t.Errorf("POST %s without the CSRF token: %d, want 403", path, r.status)
		}
		if r := b.do("POST", path, struct{}{}, "Origin", "http://evil.example", csrfHeader, b.csrf); r.status != http.StatusForbidden {
			t.Errorf("POST %s from another site: %d, want 403", path, r.status)
		}
	}
	if r := b.change("/api/quests/q1/scan", map[string]any{"hypotheses": []string{"gamma"}}); r.status != http.StatusOK || !strings.Contains(string(r.body), `"added"`) {
		t.Errorf("scan from a session: %d %s", r.status, r.body)
	}
	for _, path := range []string{"/api/quests/q1/submit?node=n1", "/api/quests/q1/export/abort", "/api/tick"} {
		if r := b.change(path, nil); r.status != http.StatusForbidden || !strings.Contains(string(r.body), "not offered on the network") {
			t.Errorf("POST %s: %d %s, want 403", path, r.status, r.body)
		}
	}
	// The sim button needs the sim backend: here there is no box at all.
	if r := b.change("/api/device/press", map[string]any{"hold": "2s", "times": 1}); r.status != http.StatusServiceUnavailable {
		t.Errorf("press without a box: %d %s", r.status, r.body)
	}
}

// TestLogin: the cookie's attributes, wrong passwords, the rate limit,
// logout, expiry, and a password reset while the daemon runs.
func TestLogin(t *testing.T) {
	f := start(t, setup{cfg: config.Dashboard{SessionTTL: config.Duration{Duration: time.Hour}}})
	f.quest(nil, "alpha")
	b := f.browser()
	r := b.login(testPassword)
	if r.status != http.StatusOK || b.csrf == "" {
		t.Fatalf("login: %d %s", r.status, r.body)
	}
	c := (&http.Response{Header: r.header}).Cookies()
	if len(c) != 1 || c[0].Name != sessionCookie || !c[0].HttpOnly || c[0].SameSite != http.SameSiteStrictMode || c[0].Secure || c[0].Path != "/" || c[0].MaxAge != 3600 {
		t.Errorf("session cookie: %+v", c)
	}
	tls := f.browser().do("POST", "/login", LoginRequest{Password: testPassword}, "X-Forwarded-Proto", "https")
	if c := (&http.Response{Header: tls.header}).Cookies(); len(c) != 1 || !c[0].Secure {
		t.Errorf("session cookie behind TLS: %+v", c)
	}
	var s Session
	if r := b.do("GET", "/session", nil); r.status != http.StatusOK || !strings.Contains(string(r.body), `"logged_in":true`) {
		t.Errorf("GET /session logged in: %s", r.body)
	} else if s = sessionOf(t, r); s.CSRF != b.csrf || !s.CanRead || s.Consent {
		t.Errorf("session %+v", s)
	}

	// Not JSON, or from another site: refused before the password is looked at.
	if r := f.browser().do("POST", "/login", nil, "Content-Type", "application/x-www-form-urlencoded"); r.status != http.StatusBadRequest {
		t.Errorf("a form login: %d", r.status)
	}
	if r := f.browser().do("POST", "/login", LoginRequest{Password: testPassword}, "Origin", "http://evil.example"); r.status != http.StatusForbidden {
		t.Errorf("a login from another site: %d", r.status)
	}

	// Five wrong passwords, then even the right one waits.
	guess := f.browser()
	for i := range loginBurst {
		if r := guess.login("wrong-" + string(rune('a'+i))); r.status != http.StatusUnauthorized {
			t.Fatalf("wrong password %d: %d %s", i, r.status, r.body)
		}
	}
	r = guess.login(testPassword)
	if r.status != http.StatusTooManyRequests || r.errorCode() != "too_many_requests" || r.header.Get("Retry-After") == "" {
		t.Errorf("sixth try: %d %s %v, want 429 with Retry-After", r.status, r.body, r.header)
	}
	f.clock.add(loginRefill)
	if r := guess.login(testPassword); r.status != http.StatusOK {
		t.Errorf("after waiting: %d %s", r.status, r.body)
	}

	// Logout ends that session only.
	other := f.browser()
	other.login(testPassword)
	if r := other.change("/logout", nil); r.status != http.StatusOK {
		t.Errorf("logout: %d", r.status)
	}
	if r := other.do("GET", "/api/quests", nil); r.status != http.StatusUnauthorized {
		t.Errorf("after logout: %d", r.status)
	}
	if r := b.do("GET", "/api/quests", nil); r.status != http.StatusOK {
		t.Errorf("another session after a logout: %d", r.status)
	}

	// A new password (questbox password, daemon running) logs everyone out.
	if err := writeCredentials(f.pwfile, "a-brand-new-password", bcrypt.MinCost); err != nil {
		t.Fatal(err)
	}
	if r := b.do("GET", "/api/quests", nil); r.status != http.StatusUnauthorized {
		t.Errorf("old session after a password reset: %d", r.status)
	}
	f.clock.add(loginBurst * loginRefill) // the guesses above are forgiven
	fresh := f.browser()
	if r := fresh.login(testPassword); r.status != http.StatusUnauthorized {
		t.Errorf("old password after a reset: %d", r.status)
	}
	if r := fresh.login("a-brand-new-password"); r.status != http.StatusOK {
		t.Errorf("new password: %d %s", r.status, r.body)
	}

	// Sessions expire.
	f.clock.add(time.Hour)
	if r := fresh.do("GET", "/api/quests", nil); r.status != http.StatusUnauthorized {
		t.Errorf("after session_ttl: %d", r.status)
	}
}

func sessionOf(t *testing.T, r reply) Session {
	t.Helper()
	var s Session
	if err := jsonUnmarshal(r.body, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestConsentFromTheDashboard: off by default; on, a logged-in session
// approves for the claim it was shown, as dashboard:owner.
func TestConsentFromTheDashboard(t *testing.T) {
	for _, enabled := range []bool{false, true} {
		f := start(t, setup{cfg: config.Dashboard{Consent: enabled}})
		f.quest([]string{"scout"}, "alpha", "beta")
		res := f.submit("q1", "n1", answer("promising", "alpha reads all twenty sample invoices."))
		if res.Status != "awaiting_consent" {
			t.Fatalf("n1 is %s", res.Status)
		}
		b := f.browser()
		b.login(testPassword)
		r := b.change("/api/consents/n1/approve", map[string]string{"claim_hash": res.ClaimHash})
		if !enabled {
			if r.status != http.StatusForbidden || !strings.Contains(string(r.body), "not enabled") {
				t.Errorf("consent off: %d %s, want 403", r.status, r.body)
			}
			continue
		}
		if r.status != http.StatusOK {
			t.Fatalf("approve: %d %s", r.status, r.body)
		}
		n, _ := f.eng.Node("n1")
		if a := n.Attempts[len(n.Attempts)-1]; a.Outcome != "granted" || a.Feedback != "consent by dashboard:owner" {
			t.Errorf("last attempt %+v", a)
		}
		res = f.submit("q1", "n2", answer("promising", "beta reads most of the sample invoices."))
		if r := b.change("/api/consents/n2/reject", map[string]string{"claim_hash": strings.Repeat("a", 64)}); r.status != http.StatusConflict {
			t.Errorf("reject for a claim not shown: %d %s, want 409", r.status, r.body)
		}
		if r := b.change("/api/consents/n2/reject", map[string]string{"claim_hash": res.ClaimHash}); r.status != http.StatusOK || !strings.Contains(string(r.body), "rejected by human") {
			t.Errorf("reject: %d %s", r.status, r.body)
		}
	}
}

func TestNewPassword(t *testing.T) {
	seen := map[string]bool{}
	for range 50 {
		p := NewPassword()
		if len(p) != 19 || strings.Count(p, "-") != 3 || strings.ContainsAny(p, "01ilo") || seen[p] {
			t.Fatalf("NewPassword() = %q", p)
		}
		seen[p] = true
	}
	if err := SetPassword(t.TempDir()+"/pw", "short"); err == nil {
		t.Error("a 5-character password was accepted")
	}
}

// TestAssetTypes: each file of the page is served with its own type and
// charset, the same on every system (no MIME database is read for them).
func TestAssetTypes(t *testing.T) {
	f := start(t, setup{})
	b := f.browser()
	for path, want := range map[string]string{
		"/":        "text/html; charset=utf-8",
		"/app.css": "text/css; charset=utf-8",
		"/app.js":  "text/javascript; charset=utf-8",
		"/runs.js": "text/javascript; charset=utf-8",
	} {
		r := b.do("GET", path, nil)
		if r.status != http.StatusOK || r.header.Get("Content-Type") != want {
			t.Errorf("GET %s: %d, Content-Type %q, want 200 %q", path, r.status, r.header.Get("Content-Type"), want)
		}
	}
}
