package dashboard

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/questbox/questbox/internal/goldentest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name (-update rewrites it).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldentest.Check(t, filepath.Join("testdata", name), got, *update, "run go test ./ui/dashboard -update if the change is meant; README's \"The session API\" documents it")
}

// exchange is one request and its answer as the README documents them:
// the status, the session cookie's attributes (not its value) and the
// JSON body, with the random CSRF token replaced by <csrf>.
func exchange(t *testing.T, r reply) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString(http.StatusText(r.status) + "\n")
	for _, c := range r.header.Values("Set-Cookie") {
		name, attrs, _ := strings.Cut(c, ";")
		name, _, _ = strings.Cut(name, "=")
		b.WriteString("Set-Cookie: " + name + "=<value>;" + attrs + "\n")
	}
	var v map[string]any
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("the answer is not JSON: %v\n%s", err, r.body)
	}
	if _, ok := v["csrf"]; ok {
		v["csrf"] = "<csrf>"
	}
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestSessionAPI pins the session API a script uses (README, "The session
// API"): GET /session, POST /login with a JSON password, a change with the
// session cookie and the X-CSRF-Token header (no Origin: curl sends none),
// POST /logout; and the refusals a script meets.
func TestSessionAPI(t *testing.T) {
	f := start(t, setup{})
	q := f.quest(nil, "tesseract jpn")
	curl := f.browser() // a cookie jar, no Origin: what `curl -c jar -b jar` is

	golden(t, "session-anonymous.txt", exchange(t, curl.do("GET", "/session", nil)))
	golden(t, "login-wrong.txt", exchange(t, curl.do("POST", "/login", LoginRequest{Password: "wrong"})))
	r := curl.do("POST", "/login", LoginRequest{Password: testPassword})
	golden(t, "login.txt", exchange(t, r))
	var s Session
	if err := json.Unmarshal(r.body, &s); err != nil || s.CSRF == "" {
		t.Fatalf("login answered %s, want a CSRF token", r.body)
	}
	if r := curl.do("POST", "/api/quests/"+q.ID+"/stop", struct{}{}); r.status != http.StatusForbidden {
		t.Errorf("a change without X-CSRF-Token: %d %s, want 403", r.status, r.body)
	}
	if r := curl.do("POST", "/api/quests/"+q.ID+"/stop", struct{}{}, csrfHeader, s.CSRF); r.status != http.StatusOK {
		t.Errorf("a change with the cookie and X-CSRF-Token: %d %s, want 200", r.status, r.body)
	}
	if r := curl.do("GET", "/api/quests/"+q.ID, nil); r.status != http.StatusOK {
		t.Errorf("a read with the session cookie: %d %s, want 200", r.status, r.body)
	}
	golden(t, "logout.txt", exchange(t, curl.do("POST", "/logout", nil)))
	if r := curl.do("GET", "/api/quests", nil); r.status != http.StatusUnauthorized {
		t.Errorf("a read after the logout: %d %s, want 401", r.status, r.body)
	}
}
