package metrics

import (
	"bufio"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/questbox/questbox/ui/api"
)

// scrape returns the exposition as name{labels} -> value text.
func scrape(t *testing.T, h http.Handler) map[string]string {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type %q", ct)
	}
	out := map[string]string{}
	sc := bufio.NewScanner(rec.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			t.Fatalf("not exposition format: %q", line)
		}
		out[line[:i]] = line[i+1:]
	}
	return out
}

func TestMetrics(t *testing.T) {
	store := filepath.Join(t.TempDir(), "questbox.db")
	os.WriteFile(store, make([]byte, 32768), 0o600)
	commits := uint64(7)
	m := New(Sources{
		Summary:     func() (api.Summary, error) { return api.Summary{PendingConsents: 2}, nil },
		OutboxDepth: func() uint64 { return 5 },
		StorePath:   store,
		Commits:     func() uint64 { return commits },
		Clients:     func() int { return 3 },
		AgentUsage: func() []ProviderUsage {
			return []ProviderUsage{{Provider: "claude", Tokens: 1100, CostUSD: 0.4321}, {Provider: "demo", Tokens: 40}}
		},
	})
	m.ObserveTick(3*time.Millisecond, nil)
	m.ObserveTick(40*time.Millisecond, errors.New("disk full"))
	m.ObserveEvents([]api.Event{
		{Kind: api.KindNode, From: "pending", To: "running"},
		{Kind: api.KindNode, From: "running", To: "pending"},
		{Kind: api.KindVerdict, Outcome: "FAIL"},
		{Kind: api.KindVerdict, Outcome: "PASS"},
		{Kind: api.KindVerdict, Outcome: "PASS"},
		{Kind: api.KindVerdict, Outcome: "surprise"},
		{Kind: api.KindConsent, Outcome: "granted"},
		{Kind: api.KindNode, From: "pending", To: "running"},
	})
	got := scrape(t, m)
	for name, want := range map[string]string{
		"questbox_ticks_total":                              "2",
		"questbox_tick_errors_total":                        "1",
		"questbox_tick_duration_seconds_count":              "2",
		`questbox_tick_duration_seconds_bucket{le="0.005"}`: "1",
		`questbox_tick_duration_seconds_bucket{le="0.05"}`:  "2",
		"questbox_dispatches_total":                         "2",
		`questbox_verdicts_total{outcome="PASS"}`:           "2",
		`questbox_verdicts_total{outcome="FAIL"}`:           "1",
		`questbox_verdicts_total{outcome="REVIEW"}`:         "0",
		`questbox_verdicts_total{outcome="other"}`:          "1",
		`questbox_consents_total{outcome="granted"}`:        "1",
		"questbox_consents_pending":                         "2",
		"questbox_outbox_depth":                             "5",
		"questbox_store_size_bytes":                         "32768",
		"questbox_store_commits_total":                      "7",
		"questbox_dashboard_clients":                        "3",
		"questbox_mqtt_configured":                          "0",
		"questbox_mqtt_connected":                           "0",
		`questbox_agent_tokens_total{provider="claude"}`:    "1100",
		`questbox_agent_cost_usd_total{provider="claude"}`:  "0.4321",
		`questbox_agent_tokens_total{provider="demo"}`:      "40",
		`questbox_agent_cost_usd_total{provider="demo"}`:    "0",
	} {
		if got[name] != want {
			t.Errorf("%s = %q, want %s", name, got[name], want)
		}
	}
	for _, name := range []string{"process_resident_memory_bytes", "go_goroutines"} {
		if _, ok := got[name]; !ok {
			t.Errorf("%s missing", name)
		}
	}

	// The MQTT client's setter, when no source reads the connection.
	m.SetMQTTConnected(true)
	commits = 9
	got = scrape(t, m)
	if got["questbox_mqtt_configured"] != "1" || got["questbox_mqtt_connected"] != "1" || got["questbox_store_commits_total"] != "9" {
		t.Errorf("after SetMQTTConnected(true): configured %s connected %s commits %s", got["questbox_mqtt_configured"],
			got["questbox_mqtt_connected"], got["questbox_store_commits_total"])
	}
	// A source, when given, wins.
	m2 := New(Sources{MQTTConnected: func() (bool, bool) { return true, false }})
	m2.SetMQTTConnected(true)
	if got := scrape(t, m2); got["questbox_mqtt_configured"] != "1" || got["questbox_mqtt_connected"] != "0" {
		t.Errorf("with a source: %v", got)
	}
}

// TestMemoryLimitGauge: questbox_memory_limit_bytes is the runtime's limit
// in force, read at each scrape, and 0 for none.
func TestMemoryLimitGauge(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
	m := New(Sources{})
	debug.SetMemoryLimit(24 << 20)
	if got := scrape(t, m)["questbox_memory_limit_bytes"]; got != "25165824" {
		t.Errorf("with a 24MiB limit: questbox_memory_limit_bytes = %q, want 25165824", got)
	}
	debug.SetMemoryLimit(math.MaxInt64)
	if got := scrape(t, m)["questbox_memory_limit_bytes"]; got != "0" {
		t.Errorf("with no limit: questbox_memory_limit_bytes = %q, want 0", got)
	}
}
