package dashboard

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// Sessions are stateless: the cookie carries when it was issued and a
// random id, signed with the session key of the password file (HMAC-SHA256).
// They survive a restart of the daemon (the page reconnects without a new
// login) and all end at once when the password is reset, because a new
// password comes with a new key. Logging out forgets the cookie in the
// browser and revokes its id in this daemon until it would have expired.
//
// The CSRF token is an HMAC of the session id under the same key: bound to
// the session, sent by the page in the X-CSRF-Token header of every change.

const (
	sessionCookie = "questbox_session"
	csrfHeader    = "X-CSRF-Token"
	// sessionUser names the one user of the dashboard in consent records
	// ("dashboard:owner"): whoever knows the box's password.
	sessionUser = "owner"
	// maxRevoked bounds the logged-out ids remembered.
	maxRevoked = 1024
)

// session is a verified session cookie.
type session struct {
	id     []byte // random, 16 bytes
	issued time.Time
	csrf   string
}

type authKey struct{}

// auth checks passwords, sessions and CSRF tokens. It is safe for
// concurrent use.
type auth struct {
	file   *passwordFile
	ttl    time.Duration
	now    func() time.Time
	limit  *limiter
	bcrypt chan struct{} // one password check at a time: bcrypt is slow on a Pi on purpose

	mu          sync.Mutex           // guards the fields below
	revoked     map[string]time.Time // session id -> when it would expire
	verified    [sha256.Size]byte    // sha256 of the last password that matched verifiedFor
	verifiedFor string               // the bcrypt hash it matched
}

func newAuth(path string, ttl time.Duration, now func() time.Time) *auth {
	return &auth{file: &passwordFile{path: path}, ttl: ttl, now: now, limit: newLimiter(now),
		bcrypt: make(chan struct{}, 1), revoked: map[string]time.Time{}}
}

// errWrongPassword is returned by checkPassword for a wrong password.
var errWrongPassword = errors.New("wrong password")

// checkPassword compares password with the file's hash. A password that
// matched before is recognised without bcrypt (a Prometheus scraper with
// basic auth every 15 s must not cost the Pi a bcrypt each time).
func (a *auth) checkPassword(ctx context.Context, password string) (*credentials, error) {
	cred, err := a.file.get()
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(password))
	a.mu.Lock()
	cached := a.verifiedFor == string(cred.hash) && subtle.ConstantTimeCompare(sum[:], a.verified[:]) == 1
	a.mu.Unlock()
	if cached {
		return cred, nil
	}
	select {
	case a.bcrypt <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	err = bcrypt.CompareHashAndPassword(cred.hash, []byte(password))
	<-a.bcrypt
	if err != nil {
		return nil, errWrongPassword
	}
	a.mu.Lock()
	a.verified, a.verifiedFor = sum, string(cred.hash)
	a.mu.Unlock()
	return cred, nil
}

func mac(key []byte, parts ...[]byte) []byte {
	h := hmac.New(sha256.New, key)
	for _, p := range parts {
		h.Write(p)
	}
	return h.Sum(nil)
}

var b64 = base64.RawURLEncoding

// issue makes a new session cookie value.
func (a *auth) issue(cred *credentials) (value string, s session) {
	payload := make([]byte, 8+16)
	binary.BigEndian.PutUint64(payload, uint64(a.now().Unix()))
	if _, err := rand.Read(payload[8:]); err != nil {
		panic("BUG: crypto/rand failed: " + err.Error())
	}
	value = b64.EncodeToString(payload) + "." + b64.EncodeToString(mac(cred.key, []byte("session"), payload))
	return value, session{id: payload[8:], issued: time.Unix(int64(binary.BigEndian.Uint64(payload)), 0), csrf: csrfToken(cred, payload[8:])}
}

func csrfToken(cred *credentials, id []byte) string {
	return b64.EncodeToString(mac(cred.key, []byte("csrf"), id))
}

// session returns the request's valid session, or nil.
func (a *auth) session(r *http.Request) *session {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return nil
	}
	cred, err := a.file.get()
	if err != nil {
		return nil
	}
	p, m, ok := strings.Cut(c.Value, ".")
	if !ok {
		return nil
	}
	payload, err1 := b64.DecodeString(p)
	sig, err2 := b64.DecodeString(m)
	if err1 != nil || err2 != nil || len(payload) != 24 || !hmac.Equal(sig, mac(cred.key, []byte("session"), payload)) {
		return nil
	}
	issued := time.Unix(int64(binary.BigEndian.Uint64(payload)), 0)
	now := a.now()
	if !now.Before(issued.Add(a.ttl)) || issued.After(now.Add(time.Minute)) {
		return nil
	}
	id := payload[8:]
	a.mu.Lock()
	_, revoked := a.revoked[string(id)]
	a.mu.Unlock()
	if revoked {
		return nil
	}
	return &session{id: id, issued: issued, csrf: csrfToken(cred, id)}
}

// revoke forgets s in this daemon until it would have expired anyway.
func (a *auth) revoke(s *session) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	for id, until := range a.revoked {
		if !now.Before(until) {
			delete(a.revoked, id)
		}
	}
	if len(a.revoked) >= maxRevoked {
		for id := range a.revoked {
			delete(a.revoked, id)
			break
		}
	}
	a.revoked[string(s.id)] = s.issued.Add(a.ttl)
}

// csrfOK reports whether r carries s's CSRF token.
func csrfOK(r *http.Request, s *session) bool {
	got := r.Header.Get(csrfHeader)
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.csrf)) == 1
}

// cookie is the session cookie for value; maxAge < 0 deletes it.
func cookie(r *http.Request, value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: sessionCookie, Value: value, Path: "/", MaxAge: maxAge, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: isTLS(r)}
}

// isTLS reports whether the browser reached us over TLS: directly, or
// through a reverse proxy that says so. (A forged header only makes the
// cookie Secure, which hurts nobody but the forger.)
func isTLS(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

// clientAddr is the address failed logins are counted against.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// sameOrigin reports whether a browser request comes from one of our own
// pages: its Origin (or, without one, its Referer) names this host or one
// of the configured origins. A request with neither is not from a
// browser page (browsers send Origin on every POST and websocket) and
// passes; it still needs a session and, for changes, the CSRF token.
func (s *Server) sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		ref := r.Header.Get("Referer")
		if ref == "" {
			return true
		}
		u, err := url.Parse(ref)
		if err != nil {
			return false
		}
		origin = u.Scheme + "://" + u.Host
	}
	if origin == "null" {
		return false
	}
	for _, o := range s.opt.Config.Origins {
		if strings.EqualFold(origin, o) {
			return true
		}
	}
	u, err := url.Parse(origin)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && strings.EqualFold(u.Host, r.Host)
}
