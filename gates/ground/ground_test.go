package ground

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/questbox/questbox/gates"
	"github.com/questbox/questbox/internal/loopback"
)

// localNet is a Net allowed to reach 127.0.0.1, where every test server is.
func localNet(cfg NetConfig) *Net {
	cfg.AllowPrivate = true
	return NewNet(cfg)
}

func testServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("Tesseract scored 91% on invoices")) })
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(strings.Repeat("x", 5000))) })
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	mux.HandleFunc("/hop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	srv := httptest.NewServer(mux) // listens on 127.0.0.1
	t.Cleanup(srv.Close)
	return srv
}

func TestNetFetchURL(t *testing.T) {
	srv := testServer(t)
	closed := "http://" + loopback.ClosedAddr(t) + "/"
	n := localNet(NetConfig{MaxBody: 1000, MaxRedirects: 3, Timeout: 5 * time.Second})
	tests := []struct {
		name          string
		url           string
		wantStatus    int
		wantBody      string
		wantTruncated bool
		wantTransport bool
		wantAnswerErr string
	}{
		{"ok", srv.URL + "/ok", 200, "Tesseract scored 91% on invoices", false, false, ""},
		{"404 is an answer", srv.URL + "/missing", 404, "404 page not found\n", false, false, ""},
		{"body bounded", srv.URL + "/big", 200, strings.Repeat("x", 1000), true, false, ""},
		{"redirect followed", srv.URL + "/hop", 200, "Tesseract scored 91% on invoices", false, false, ""},
		{"redirect loop is an answer", srv.URL + "/loop", 0, "", false, false, "too many redirects"},
		{"closed port is transport", closed, 0, "", false, true, ""},
		{"not http", "ftp://example.org/x", 0, "", false, false, "not an absolute http(s) URL"},
		{"relative", "/ok", 0, "", false, false, "not an absolute http(s) URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := n.FetchURL(context.Background(), tt.url)
			if got := IsTransport(err); got != tt.wantTransport {
				t.Fatalf("got transport %v (err %v), want %v", got, err, tt.wantTransport)
			}
			if tt.wantAnswerErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantAnswerErr) {
					t.Fatalf("got error %v, want one mentioning %q", err, tt.wantAnswerErr)
				}
				return
			}
			if tt.wantTransport {
				return
			}
			if err != nil {
				t.Fatalf("got error %v, want none", err)
			}
			if b.Status != tt.wantStatus || string(b.Data) != tt.wantBody || b.Truncated != tt.wantTruncated {
				t.Errorf("got %d %q truncated=%v, want %d %q truncated=%v", b.Status, b.Data, b.Truncated, tt.wantStatus, tt.wantBody, tt.wantTruncated)
			}
		})
	}
}

func TestNetRefusesPrivateByDefault(t *testing.T) {
	srv := testServer(t)
	_, err := NewNet(NetConfig{}).FetchURL(context.Background(), srv.URL+"/ok")
	if err == nil || IsTransport(err) || !errors.Is(err, errBlocked) {
		t.Errorf("got %v, want an answer error for a private address", err)
	}
}

func TestNetDial(t *testing.T) {
	srv := testServer(t)
	n := localNet(NetConfig{})
	if err := n.Dial(context.Background(), strings.TrimPrefix(srv.URL, "http://")); err != nil {
		t.Errorf("got %v dialling a listening port, want nil", err)
	}
	if err := n.Dial(context.Background(), loopback.ClosedAddr(t)); !IsTransport(err) {
		t.Errorf("got %v dialling a closed port, want a transport error", err)
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nxdomain is an answer", &net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}, false},
		{"dns timeout is transport", &net.DNSError{Err: "i/o timeout", Name: "x", IsTimeout: true}, true},
		{"dns server failure is transport", &net.DNSError{Err: "server misbehaving", Name: "x", IsTemporary: true}, true},
		{"refused is transport", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}, true},
		{"deadline is transport", context.DeadlineExceeded, true},
		{"blocked is an answer", errBlocked, false},
		{"redirects are an answer", errRedirects, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsTransport(classify("fetch", "t", tt.err)); got != tt.want {
				t.Errorf("got transport %v, want %v", got, tt.want)
			}
		})
	}
}

// countingResolver is a fake Resolver that counts calls per target.
type countingResolver struct {
	fetches atomic.Int64
	mx      atomic.Int64
	refuse  map[string]bool // targets answered with a transport error
}

func (r *countingResolver) FetchURL(_ context.Context, url string) (Body, error) {
	r.fetches.Add(1)
	if r.refuse[url] {
		return Body{}, &TransportError{Op: "fetch", Target: url, Err: errors.New("connection refused")}
	}
	if strings.HasSuffix(url, "/404") {
		return Body{Status: 404}, nil
	}
	return Body{Status: 200, Data: []byte("body of " + url)}, nil
}

func (r *countingResolver) LookupMX(_ context.Context, d string) ([]string, error) {
	r.mx.Add(1)
	return []string{"mx." + d}, nil
}

func (r *countingResolver) Dial(context.Context, string) error { return nil }

func TestSnapshotResolvesOnce(t *testing.T) {
	res := &countingResolver{}
	s := NewSnapshot(Config{Resolver: res})
	req := gates.Request{Kind: gates.ReqFetchURL, Target: "https://a.example/x"}
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if o, err := s.Observe(context.Background(), req); err != nil || o.Status != 200 {
				t.Errorf("got %+v, %v, want status 200", o, err)
			}
		}()
	}
	wg.Wait()
	facts, err := s.Resolve(context.Background(), []gates.Request{req, req, {Kind: gates.ReqLookupMX, Target: "example.org"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.fetches.Load(); got != 1 {
		t.Errorf("got %d fetches, want 1", got)
	}
	if got := res.mx.Load(); got != 1 {
		t.Errorf("got %d MX lookups, want 1", got)
	}
	if o, ok := facts.Get(gates.Request{Kind: gates.ReqLookupMX, Target: "example.org"}); !ok || len(o.MX) != 1 || o.MX[0] != "mx.example.org" {
		t.Errorf("got %+v, want the MX answer", o)
	}
}

func TestSnapshotClassifies(t *testing.T) {
	res := &countingResolver{refuse: map[string]bool{"https://down.example/": true}}
	s := NewSnapshot(Config{Resolver: res})
	tests := []struct {
		name          string
		req           gates.Request
		wantTransport bool
		wantErr       bool
		wantStatus    int
	}{
		{"ok", gates.Request{Kind: gates.ReqFetchURL, Target: "https://up.example/"}, false, false, 200},
		{"404 is a status", gates.Request{Kind: gates.ReqFetchURL, Target: "https://up.example/404"}, false, false, 404},
		{"refused is transport", gates.Request{Kind: gates.ReqFetchURL, Target: "https://down.example/"}, true, false, 0},
		{"no runner is an answer", gates.Request{Kind: gates.ReqRun, Argv: []string{"true"}}, false, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := s.Observe(context.Background(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if (o.Transport != "") != tt.wantTransport || (o.Err != "") != tt.wantErr || o.Status != tt.wantStatus {
				t.Errorf("got %+v, want transport=%v err=%v status=%d", o, tt.wantTransport, tt.wantErr, tt.wantStatus)
			}
		})
	}
}

// TestStagedOverSnapshot wires a real Snapshot into staged evaluation: a
// catalog whose two ground rules read the same URL fetches it once, and a
// stage-1 FAIL fetches nothing.
func TestStagedOverSnapshot(t *testing.T) {
	c, err := gates.LoadCatalog([]gates.RuleSpec{
		{ID: "contract", Kind: "contract", Level: "fail"},
		{ID: "quotes", Kind: "citation-quote", Level: "fail"},
		{ID: "resolves", Kind: "url-resolves", Level: "fail"},
	})
	if err != nil {
		t.Fatal(err)
	}
	good := []byte(`{"verdict":"promising","evidence":"e","citations":[{"source":"https://a.example/","quote":"body of"}],"new_directions":[]}`)
	tests := []struct {
		name        string
		raw         []byte
		want        gates.Outcome
		wantFetches int64
	}{
		{"two rules, one url, one fetch", good, gates.OutcomePass, 1},
		{"stage one fails, no fetch", []byte("not json"), gates.OutcomeFail, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := &countingResolver{}
			got := c.EvaluateStaged(context.Background(), gates.Input{Raw: tt.raw}, NewSnapshot(Config{Resolver: res}))
			if got.Deferred || got.Verdict.Outcome != tt.want {
				t.Fatalf("got %+v, want %v", got, tt.want)
			}
			if n := res.fetches.Load(); n != tt.wantFetches {
				t.Errorf("got %d fetches, want %d", n, tt.wantFetches)
			}
		})
	}
}

// TestStagedOfflineOverRealNet: every resolver request fails with a
// transport error (a closed local port), so the node is deferred, not failed.
func TestStagedTransportDefers(t *testing.T) {
	c, err := gates.LoadCatalog([]gates.RuleSpec{
		{ID: "contract", Kind: "contract", Level: "fail"},
		{ID: "quotes", Kind: "citation-quote", Level: "fail"},
	})
	if err != nil {
		t.Fatal(err)
	}
	raw := []byte(`{"verdict":"promising","evidence":"e","citations":[{"source":"http://` + loopback.ClosedAddr(t) + `/","quote":"q"}],"new_directions":[]}`)
	got := c.EvaluateStaged(context.Background(), gates.Input{Raw: raw}, NewSnapshot(Config{Resolver: localNet(NetConfig{})}))
	if !got.Deferred {
		t.Fatalf("got %+v, want deferred", got)
	}
}

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestProbe(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)}
	up := true
	checks := 0
	var changes []bool
	p, err := NewProbe(ProbeConfig{
		Check: func(context.Context) error {
			checks++
			if up {
				return nil
			}
			return errors.New("no route")
		},
		TTL:      time.Minute,
		Now:      clock.now,
		OnChange: func(online bool) { changes = append(changes, online) },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	steps := []struct {
		name       string
		advance    time.Duration
		up         bool
		invalidate bool
		want       bool
		wantChecks int
	}{
		{"first call checks", 0, true, false, true, 1},
		{"cached within the TTL", 30 * time.Second, false, false, true, 1},
		{"checked again after the TTL", 31 * time.Second, false, false, false, 2},
		{"cached offline", 10 * time.Second, true, false, false, 2},
		{"invalidated", 0, true, true, true, 3},
		{"clock going backwards rechecks", -time.Hour, true, false, true, 4},
	}
	for _, s := range steps {
		clock.advance(s.advance)
		up = s.up
		if s.invalidate {
			p.Invalidate()
		}
		if got := p.Online(ctx); got != s.want {
			t.Errorf("%s: got online %v, want %v", s.name, got, s.want)
		}
		if checks != s.wantChecks {
			t.Errorf("%s: got %d checks, want %d", s.name, checks, s.wantChecks)
		}
	}
	if want := []bool{true, false, true}; !slices.Equal(changes, want) {
		t.Errorf("got changes %v, want %v", changes, want)
	}
}

func TestDialCheck(t *testing.T) {
	srv := testServer(t)
	if err := DialCheck(nil, strings.TrimPrefix(srv.URL, "http://"))(context.Background()); err != nil {
		t.Errorf("got %v, want nil", err)
	}
	if err := DialCheck(nil, loopback.ClosedAddr(t))(context.Background()); err == nil {
		t.Error("got nil for a closed port, want an error")
	}
}

func TestExec(t *testing.T) {
	tests := []struct {
		name     string
		argv     []string
		stdin    string
		timeout  time.Duration
		wantCode int
		wantOut  string
		wantTO   bool
		wantErr  bool
	}{
		{"exit zero", []string{"true"}, "", time.Minute, 0, "", false, false},
		{"exit nonzero", []string{"false"}, "", time.Minute, 1, "", false, false},
		{"stdin to stdout", []string{"cat"}, "hello", time.Minute, 0, "hello", false, false},
		{"stdout capped", []string{"cat"}, strings.Repeat("y", 100), time.Minute, 0, strings.Repeat("y", 10), false, false},
		{"timeout kills", []string{"sleep", "60"}, "", 50 * time.Millisecond, -1, "", true, false},
		{"not found", []string{"/nonexistent/questbox-check"}, "", time.Minute, 0, "", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), tt.timeout)
			defer cancel()
			got, err := Exec{MaxStdout: 10}.Run(ctx, tt.argv, []byte(tt.stdin))
			if (err != nil) != tt.wantErr {
				t.Fatalf("got error %v, want error %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if got.ExitCode != tt.wantCode || got.Stdout != tt.wantOut || got.TimedOut != tt.wantTO {
				t.Errorf("got %+v, want code %d stdout %q timedout %v", got, tt.wantCode, tt.wantOut, tt.wantTO)
			}
		})
	}
}

// Exec.Confine rewrites each program's command before it starts (the
// daemon confines it there), its cleanup runs once the program has
// ended, and its error stops the run before anything starts.
func TestExecConfine(t *testing.T) {
	cleaned := 0
	e := Exec{Confine: func(cmd *exec.Cmd) (func(), error) {
		cmd.Args = append(cmd.Args, "confined")
		return func() { cleaned++ }, nil
	}}
	got, err := e.Run(context.Background(), []string{"echo"}, nil)
	if err != nil || got.Stdout != "confined\n" || cleaned != 1 {
		t.Errorf("got %+v, %v, %d cleanups; want the rewritten command's output and one cleanup", got, err, cleaned)
	}
	refused := errors.New("no confinement here")
	e.Confine = func(*exec.Cmd) (func(), error) { return nil, refused }
	if _, err := e.Run(context.Background(), []string{"echo"}, nil); !errors.Is(err, refused) {
		t.Errorf("got %v, want the confinement's error", err)
	}
}
