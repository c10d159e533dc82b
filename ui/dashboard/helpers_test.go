package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"golang.org/x/crypto/bcrypt"

	"github.com/questbox/questbox/device"
	"github.com/questbox/questbox/device/box"
	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/internal/config"
	"github.com/questbox/questbox/ui/api"
	"github.com/questbox/questbox/ui/metrics"
)

const testPassword = "correct-horse-battery"

// clock is a settable clock for sessions and login limits.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// fixture is a dashboard served on 127.0.0.1 over a fresh store.
type fixture struct {
	t      *testing.T
	eng    *engine.Engine
	box    *box.Box
	srv    *Server
	url    string // http://127.0.0.1:PORT
	origin string
	pwfile string
	clock  *clock
	stop   func() // stops Serve and waits for it
}

type setup struct {
	cfg   config.Dashboard
	sim   bool // a box with the sim backend
	tweak func(*Options)
	// providers are the engine's (none: only the external agent).
	providers map[string]engine.Provider
}

// engines is api.Engines over one engine.
type engines struct{ eng *engine.Engine }

func (e engines) Engine(context.Context, bool) (*engine.Engine, error) { return e.eng, nil }

func start(t *testing.T, su setup) *fixture {
	t.Helper()
	dir := t.TempDir()
	st, err := engine.OpenStore(dir, engine.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(st, engine.Options{Providers: su.providers})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, eng: eng, pwfile: filepath.Join(dir, config.PasswordFile),
		clock: &clock{t: time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)}}
	if err := writeCredentials(f.pwfile, testPassword, bcrypt.MinCost); err != nil {
		t.Fatal(err)
	}
	cfg := su.cfg
	if cfg.Read == "" {
		cfg.Read = config.ReadPassword
	}
	ctx, cancel := context.WithCancel(context.Background())
	var bg sync.WaitGroup
	if su.sim {
		dev, err := device.Open(device.Config{Backend: device.BackendSim}, nil)
		if err != nil {
			t.Fatal(err)
		}
		f.box = box.New(dev, box.Options{})
		f.box.Attach(eng)
		f.box.SetReady()
		bg.Go(func() { f.box.Run(ctx) })
		t.Cleanup(func() { dev.Close() })
	}
	opt := Options{API: api.Options{Engines: engines{eng}, Config: config.Default(), Box: f.box, Version: "test"},
		Events: api.New(api.Options{Engines: api.Only(eng), Box: f.box}), Config: cfg, PasswordFile: f.pwfile, Now: f.clock.now,
		Metrics: metrics.New(metrics.Sources{Commits: st.Commits, StorePath: st.Path()})}
	if su.tweak != nil {
		su.tweak(&opt)
	}
	srv, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	f.srv = srv
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.url = "http://" + ln.Addr().String()
	f.origin = f.url
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	stopped := false
	f.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
		bg.Wait()
	}
	t.Cleanup(func() {
		f.stop()
		eng.Shutdown(0)
		st.Close()
	})
	return f
}

// quest makes an external quest with hypotheses as pending nodes.
func (f *fixture) quest(checkpoints []string, hyps ...string) *engine.Quest {
	f.t.Helper()
	s := f.eng.NewQuestSpec("ocr", "free OCR for Japanese invoices")
	s.Provider, s.Checkpoints = engine.ProviderExternal, checkpoints
	q, err := f.eng.NewQuest(s)
	if err != nil {
		f.t.Fatal(err)
	}
	if len(hyps) > 0 {
		if _, err := f.eng.Scan(q.ID, hyps); err != nil {
			f.t.Fatal(err)
		}
	}
	return q
}

func answer(verdict, evidence string, dirs ...string) []byte {
	if dirs == nil {
		dirs = []string{}
	}
	b, _ := json.Marshal(map[string]any{"verdict": verdict, "evidence": evidence, "citations": []any{}, "new_directions": dirs})
	return []byte("Findings.\n```json\n" + string(b) + "\n```\n")
}

func (f *fixture) submit(quest, node string, raw []byte) engine.SubmitResult {
	f.t.Helper()
	res, err := f.eng.Submit(context.Background(), quest, node, raw)
	if err != nil {
		f.t.Fatal(err)
	}
	return res
}

// browser is an HTTP client with a cookie jar, like a browser tab.
type browser struct {
	f    *fixture
	hc   *http.Client
	csrf string
}

func (f *fixture) browser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{f: f, hc: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) errorCode() string {
	var e struct {
		Error api.Error `json:"error"`
	}
	json.Unmarshal(r.body, &e)
	return e.Error.Code
}

// do sends a request; header pairs are name, value, ....
func (b *browser) do(method, path string, body any, header ...string) reply {
	b.f.t.Helper()
	var rd io.Reader
	if body != nil {
		js, _ := json.Marshal(body)
		rd = bytes.NewReader(js)
	}
	req, err := http.NewRequest(method, b.f.url+path, rd)
	if err != nil {
		b.f.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := b.hc.Do(req)
	if err != nil {
		b.f.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: data}
}

// login logs in with password and keeps the CSRF token.
func (b *browser) login(password string) reply {
	b.f.t.Helper()
	r := b.do("POST", "/login", LoginRequest{Password: password}, "Origin", b.f.origin)
	if r.status == http.StatusOK {
		var s Session
		json.Unmarshal(r.body, &s)
		b.csrf = s.CSRF
	}
	return r
}

// change sends a change the way the page does: JSON, Origin, CSRF token.
func (b *browser) change(path string, body any) reply {
	b.f.t.Helper()
	if body == nil {
		body = struct{}{}
	}
	return b.do("POST", path, body, "Origin", b.f.origin, csrfHeader, b.csrf)
}

// dial opens the websocket with since and the given Origin ("" sends none).
func (b *browser) dial(since uint64, origin string) (*websocket.Conn, *http.Response, error) {
	h := http.Header{}
	if origin != "" {
		h.Set("Origin", origin)
	}
	d := websocket.Dialer{Jar: b.hc.Jar, HandshakeTimeout: 30 * time.Second}
	return d.Dial(strings.Replace(b.f.url, "http://", "ws://", 1)+"/ws?since="+itoa(since), h)
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

// frame is any websocket frame.
type frame struct {
	Type     string        `json:"type"`
	Seq      uint64        `json:"seq"`
	Quests   []api.Quest   `json:"quests"`
	Consents []api.Consent `json:"consents"`
	Device   *api.Device   `json:"device"`
	Events   []api.Event   `json:"events"`
}

// read reads one frame; a deadline bounds a hang, it synchronises nothing.
func read(t *testing.T, c *websocket.Conn) frame {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(time.Minute))
	var f frame
	if err := c.ReadJSON(&f); err != nil {
		t.Fatalf("read a frame: %v", err)
	}
	return f
}

// until reads frames until one passes ok and returns it.
func until(t *testing.T, c *websocket.Conn, what string, ok func(frame) bool) frame {
	t.Helper()
	for i := 0; i < 1000; i++ {
		if f := read(t, c); ok(f) {
			return f
		}
	}
	t.Fatalf("no frame with %s", what)
	return frame{}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
