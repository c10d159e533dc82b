package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/questbox/questbox/ui/api"
)

// Options configure a Server.
type Options struct {
	// API are the options of the API the dashboard serves under /api/ and
	// reads its snapshots from. New sets Internal to false (no internal
	// error text leaves the box) and Consent to the dashboard's session
	// source. Its Box (nil: none) is the LEDs the page mirrors.
	API api.Options
	// Events is the API whose event watch feeds the websocket and whose
	// events the snapshots replay: the daemon's in-process API over its
	// running engine (api.Only), which outlives the network door, so the
	// pages see the engine's last events at shutdown.
	Events *api.Server
	// Config is the [dashboard] section.
	Config api.DashboardConfig
	// PasswordFile is the password file (config's DashboardPasswordFile).
	PasswordFile string
	// Metrics is served on /metrics and fed the events (nil: no /metrics).
	Metrics Metrics
	Log     *slog.Logger
	// Now is the clock of sessions and login limits (default time.Now).
	Now func() time.Time

	// Websocket tuning; zero values take the defaults.
	PingInterval time.Duration // default 30s; a client silent for twice this is dropped
	WriteTimeout time.Duration // default 10s: a frame not written by then drops the client
	SendQueue    int           // frames queued per client (default 64); a client that falls further behind is dropped
	DevicePoll   time.Duration // default 1s: how often the LED mirror is refreshed while clients are connected
	// Coalesce is the shortest time between two frames of events while
	// they keep coming (default 10ms; negative: none). See hub.gather.
	Coalesce time.Duration
}

// Metrics is what the dashboard needs of the box's metrics (package
// ui/metrics): it serves them on /metrics and feeds them the events its
// hub reads. ObserveEvents must not block.
type Metrics interface {
	http.Handler
	ObserveEvents([]api.Event)
}

// Server is the dashboard: the page, the API behind its authentication,
// the websocket and /metrics, on one mux. It is safe for concurrent use.
type Server struct {
	opt  Options
	api  *api.Server
	auth *auth
	hub  *hub
	mux  *http.ServeMux
	// changes are the mutations the network door offers (see guardAPI).
	changes *http.ServeMux
	assets  map[string]*asset
	// writeBuffers is shared by every websocket: a connection holds a
	// write buffer only while it writes a frame, so idle clients cost little.
	writeBuffers sync.Pool
}

// New returns the dashboard over opt. It fails when the password file
// cannot be read (create it first with EnsurePassword).
func New(opt Options) (*Server, error) {
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.PingInterval <= 0 {
		opt.PingInterval = 30 * time.Second
	}
	if opt.WriteTimeout <= 0 {
		opt.WriteTimeout = 10 * time.Second
	}
	if opt.SendQueue <= 0 {
		opt.SendQueue = 64
	}
	if opt.DevicePoll <= 0 {
		opt.DevicePoll = time.Second
	}
	if opt.Coalesce == 0 {
		opt.Coalesce = 10 * time.Millisecond
	}
	if opt.Config.MaxClients <= 0 {
		opt.Config.MaxClients = api.DefaultDashboardConfig().MaxClients
	}
	if opt.Config.SessionTTL.Duration <= 0 {
		opt.Config.SessionTTL = api.DefaultDashboardConfig().SessionTTL
	}
	if opt.Events == nil {
		return nil, errors.New("dashboard: no event watch")
	}
	s := &Server{opt: opt, mux: http.NewServeMux(), changes: http.NewServeMux(),
		auth: newAuth(opt.PasswordFile, opt.Config.SessionTTL.Duration, opt.Now)}
	if _, err := s.auth.file.get(); err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	ao := opt.API
	ao.Internal = false
	ao.Source = api.SourceDashboard
	ao.Consent = api.DashboardConsent(opt.Config.Consent, func(r *http.Request) string {
		user, _ := r.Context().Value(authKey{}).(string)
		return user
	})
	if ao.Log == nil {
		ao.Log = opt.Log
	}
	s.api = api.New(ao)
	assets, err := loadAssets()
	if err != nil {
		return nil, err
	}
	s.assets = assets
	if s.hub, err = newHub(s); err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	s.routes()
	return s, nil
}

func (s *Server) routes() {
	m := s.mux
	m.HandleFunc("GET /{$}", s.asset("index.html"))
	m.HandleFunc("GET /app.js", s.asset("app.js"))
	m.HandleFunc("GET /app.css", s.asset("app.css"))
	m.HandleFunc("GET /runs.js", s.asset("runs.js"))
	m.HandleFunc("GET /session", s.sessionInfo)
	m.HandleFunc("POST /login", s.login)
	m.HandleFunc("POST /logout", s.logout)
	m.HandleFunc("GET /ws", s.websocket)
	// The API's health, as on the control socket, for anyone.
	m.HandleFunc("GET /healthz", s.api.ServeHTTP)
	m.HandleFunc("/api/", s.guardAPI)
	if s.opt.Metrics != nil {
		m.HandleFunc("GET /metrics", s.metrics)
	}
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		api.WriteError(w, api.CodeNotFound, "no such page: "+r.URL.Path)
	})

	// The changes a dashboard may make (docs/design.md, "The dashboard and
	// the API"): create a
	// quest, seed it, stop and resume it, download its export (the
	// export journal's begin and acknowledgement), abort a node, decide a
	// consent (refused by the API unless dashboard.consent is on), press
	// the simulated button (refused by the box on real pins) and upload a
	// signed release (checked as `questbox update` checks it; the API
	// answers unavailable unless the daemon gave it an Updater).
	// Submitting answers, an export's abort and ticks stay with the CLI
	// on the box.
	ok := func(http.ResponseWriter, *http.Request) {}
	for _, p := range []string{"POST /api/quests", "POST /api/quests/{id}/scan", "POST /api/quests/{id}/stop", "POST /api/quests/{id}/resume",
		"POST /api/quests/{id}/export", "POST /api/quests/{id}/export/ack", "POST /api/nodes/{id}/abort",
		"POST /api/consents/{node}/approve", "POST /api/consents/{node}/reject", "POST /api/device/press",
		"POST /api/update"} {
		s.changes.HandleFunc(p, ok)
	}
}

// ServeHTTP implements http.Handler, with the headers every answer carries.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
	s.mux.ServeHTTP(w, r)
}

// canRead reports whether r may read: reading is public, or r has a
// session, or (GET only, for scrapers and scripts) HTTP basic auth with
// the password.
func (s *Server) canRead(r *http.Request) bool {
	if s.opt.Config.Read == api.ReadPublic || s.auth.session(r) != nil {
		return true
	}
	if _, pw, ok := r.BasicAuth(); ok && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		addr := clientAddr(r)
		if ok, _ := s.auth.limit.allow(addr); !ok {
			return false
		}
		if _, err := s.auth.checkPassword(r.Context(), pw); err != nil {
			if errors.Is(err, errWrongPassword) {
				s.auth.limit.failed(addr)
			}
			return false
		}
		return true
	}
	return false
}

func (s *Server) unauthorized(w http.ResponseWriter, r *http.Request) {
	if _, _, basic := r.BasicAuth(); basic {
		w.Header().Set("WWW-Authenticate", `Basic realm="questbox", charset="UTF-8"`)
	}
	api.WriteError(w, api.CodeUnauthorized, "log in to the dashboard first")
}

// guardAPI serves the API to whoever may use it: reads to readers;
// changes only from a logged-in session, from one of our pages, with the
// session's CSRF token, and only the changes the dashboard offers.
func (s *Server) guardAPI(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		if !s.canRead(r) {
			s.unauthorized(w, r)
			return
		}
		s.api.ServeHTTP(w, r)
		return
	}
	if _, pattern := s.changes.Handler(r); pattern == "" {
		api.WriteError(w, api.CodeForbidden, fmt.Sprintf("%s %s is not offered on the network; use the questbox CLI on the box", r.Method, r.URL.Path))
		return
	}
	sess := s.auth.session(r)
	if sess == nil {
		s.unauthorized(w, r)
		return
	}
	if !s.sameOrigin(r) {
		api.WriteError(w, api.CodeForbidden, "this change comes from another site's page")
		return
	}
	if !csrfOK(r, sess) {
		api.WriteError(w, api.CodeForbidden, "missing or wrong "+csrfHeader+" header (reload the page)")
		return
	}
	s.api.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), authKey{}, sessionUser)))
}

// Session is what GET /session, POST /login and POST /logout answer: what
// this browser may do.
type Session struct {
	LoggedIn bool   `json:"logged_in"`
	Read     string `json:"read"`     // password, public
	CanRead  bool   `json:"can_read"` // read public, or logged in
	CSRF     string `json:"csrf,omitempty"`
	Consent  bool   `json:"consent"` // dashboard.consent: approve and reject here
	Version  string `json:"version"`
}

func (s *Server) sessionView(sess *session) Session {
	v := Session{Read: s.opt.Config.Read, Consent: s.opt.Config.Consent, Version: s.opt.API.Version}
	if sess != nil {
		v.LoggedIn, v.CSRF = true, sess.csrf
	}
	v.CanRead = v.LoggedIn || v.Read == api.ReadPublic
	return v
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(v)
}

// sessionInfo is what this browser may do (Session).
func (s *Server) sessionInfo(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, s.sessionView(s.auth.session(r)))
}

// LoginRequest is the body of POST /login (JSON only: a form on another
// site cannot send it without the browser asking us first).
type LoginRequest struct {
	Password string `json:"password"`
}

// login checks a LoginRequest's password and starts a session: a cookie
// and the CSRF token changes must carry (Session). Wrong passwords from
// one address are rate limited.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if !s.sameOrigin(r) {
		api.WriteError(w, api.CodeForbidden, "a login from another site's page")
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		api.WriteError(w, api.CodeInvalid, "POST /login takes a JSON body: {\"password\": \"...\"}")
		return
	}
	var req LoginRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&req); err != nil {
		api.WriteError(w, api.CodeInvalid, "POST /login takes a JSON body: {\"password\": \"...\"}")
		return
	}
	addr := clientAddr(r)
	if ok, wait := s.auth.limit.allow(addr); !ok {
		w.Header().Set("Retry-After", fmt.Sprint(int(wait.Seconds())+1))
		api.WriteError(w, api.CodeTooMany, fmt.Sprintf("too many wrong passwords; try again in %s", wait.Round(time.Second)+time.Second))
		return
	}
	cred, err := s.auth.checkPassword(r.Context(), req.Password)
	switch {
	case errors.Is(err, errWrongPassword):
		s.auth.limit.failed(addr)
		s.opt.Log.Warn("dashboard: wrong password", "from", addr)
		api.WriteError(w, api.CodeUnauthorized, "wrong password")
		return
	case err != nil:
		s.opt.Log.Error("dashboard: cannot check the password", "err", err)
		api.WriteError(w, api.CodeUnavailable, "the password cannot be checked now; see the daemon's log (`questbox password` sets a new one)")
		return
	}
	value, sess := s.auth.issue(cred)
	http.SetCookie(w, cookie(r, value, int(s.opt.Config.SessionTTL.Duration.Seconds())))
	s.opt.Log.Info("dashboard: logged in", "from", addr)
	writeJSON(w, s.sessionView(&sess))
}

// logout ends this browser's session and its websockets (Session).
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if !s.sameOrigin(r) {
		api.WriteError(w, api.CodeForbidden, "a logout from another site's page")
		return
	}
	if sess := s.auth.session(r); sess != nil {
		s.auth.revoke(sess)
		s.hub.logout(sess.id)
	}
	http.SetCookie(w, cookie(r, "", -1))
	writeJSON(w, s.sessionView(nil))
}

// metrics is the Prometheus exposition of the box, for readers.
func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	if !s.canRead(r) {
		s.unauthorized(w, r)
		return
	}
	s.opt.Metrics.ServeHTTP(w, r)
}

// Clients is the number of open websockets.
func (s *Server) Clients() int { return s.hub.count() }

// Timeouts of the HTTP server: a slow or silent client cannot hold a
// connection (websockets clear them once upgraded and keep their own).
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 15 * time.Second
	writeTimeout      = 30 * time.Second
	idleTimeout       = 60 * time.Second
	shutdownDrain     = 2 * time.Second
)

// Serve serves the dashboard on ln until ctx ends, then closes every
// websocket (the pages reconnect to the next daemon by themselves), lets
// requests in flight finish for a moment, and returns. The event stream
// it follows starts at the engine's newest event.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: s, ReadHeaderTimeout: readHeaderTimeout, ReadTimeout: readTimeout,
		WriteTimeout: writeTimeout, IdleTimeout: idleTimeout, MaxHeaderBytes: 16 << 10,
		ErrorLog: slog.NewLogLogger(s.opt.Log.Handler(), slog.LevelDebug)}
	hctx, stopHub := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { s.hub.run(hctx) })
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	stopHub() // closes every websocket: they are hijacked, Shutdown does not see them
	wg.Wait()
	sctx, cancel := context.WithTimeout(context.Background(), shutdownDrain)
	defer cancel()
	if serr := srv.Shutdown(sctx); serr != nil {
		srv.Close()
	}
	if err == nil {
		err = <-errc
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
