// Package metrics is the daemon's Prometheus exposition (/metrics on the
// dashboard's address): what the tick costs, what it dispatches, the
// verdicts by outcome, the consent queue, the event outbox, the MQTT
// connection, the store's size and commits, and the process (memory,
// CPU, bytes written to storage) and its memory limit.
//
// It is built on github.com/VictoriaMetrics/metrics, a small, well-kept
// library that writes the Prometheus text format: it adds a few hundred
// kilobytes to the Pi's binary where the official client adds several
// megabytes. Each Metrics has its own set; nothing is registered globally.
//
// Counters fed by the event stream (dispatches, verdicts, consents) count
// from the daemon's start, as Prometheus counters do; gauges read their
// source at each scrape, so they cannot drift from the store.
package metrics

import (
	"io"
	"math"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"time"

	vm "github.com/VictoriaMetrics/metrics"

	"github.com/questbox/questbox/ui/api"
)

// Sources are read at each scrape. A nil source leaves its metric out.
// Each must be safe for concurrent use and quick: a scrape reads them all.
type Sources struct {
	// Summary is the box at a glance (api.Server.Summary): its pending
	// consents are the gauge questbox_consents_pending, the requests the
	// button can still answer (expired ones are not pending).
	Summary func() (api.Summary, error)
	// OutboxDepth is the number of committed events not yet delivered to
	// the slowest durable consumer (MQTT).
	OutboxDepth func() uint64
	// StorePath is the bbolt file whose size is reported.
	StorePath string
	// Commits is the store's write transactions since the daemon started.
	Commits func() uint64
	// MQTTConnected reports the broker connection; when nil, the value of
	// SetMQTTConnected is reported instead.
	MQTTConnected func() (configured, connected bool)
	// Clients is the number of open dashboard websockets.
	Clients func() int
	// AgentUsage is what each provider's runs used since the daemon
	// started: questbox_agent_tokens_total and
	// questbox_agent_cost_usd_total, by provider.
	AgentUsage func() []ProviderUsage
}

// ProviderUsage is what one provider's runs used: tokens (reported, or
// estimated where the provider reports none) and the cost its agent CLI
// reported, in US dollars.
type ProviderUsage struct {
	Provider string
	Tokens   uint64
	CostUSD  float64
}

// Verdict outcomes that have their own series; any other is counted as
// "other", so a bug cannot grow the label set without bound.
var verdictOutcomes = []string{"PASS", "FAIL", "REVIEW", "DEFERRED"}

// Consent outcomes that have their own series.
var consentOutcomes = []string{"requested", "granted", "rejected", "expired"}

// tickBuckets are the upper bounds of the tick duration histogram: a tick
// takes milliseconds (docs/design.md, "Light and nothing lost"), a slow SD
// card tens of them.
var tickBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}

// Metrics is the daemon's metrics. Its methods are safe for concurrent use.
type Metrics struct {
	set        *vm.Set
	tick       *vm.PrometheusHistogram
	ticks      *vm.Counter
	tickErrors *vm.Counter
	dispatches *vm.Counter
	verdicts   map[string]*vm.Counter // by outcome, "other" included
	consents   map[string]*vm.Counter // by outcome, "other" included

	mqtt atomic.Int32 // SetMQTTConnected: -1 unknown (left out), 0, 1

	usage func() []ProviderUsage // Sources.AgentUsage
}

// New returns the metrics over src. The first call turns on the
// library's metadata lines for the whole process (exposition.go).
func New(src Sources) *Metrics {
	exposeMetadata.Do(func() { vm.ExposeMetadata(true) })
	s := vm.NewSet()
	m := &Metrics{set: s,
		tick:       s.NewPrometheusHistogramExt("questbox_tick_duration_seconds", tickBuckets),
		ticks:      s.NewCounter("questbox_ticks_total"),
		tickErrors: s.NewCounter("questbox_tick_errors_total"),
		dispatches: s.NewCounter("questbox_dispatches_total"),
		verdicts:   map[string]*vm.Counter{},
		consents:   map[string]*vm.Counter{},
	}
	m.mqtt.Store(-1)
	m.usage = src.AgentUsage
	for _, o := range append(verdictOutcomes, "other") {
		m.verdicts[o] = s.NewCounter(`questbox_verdicts_total{outcome="` + o + `"}`)
	}
	for _, o := range append(consentOutcomes, "other") {
		m.consents[o] = s.NewCounter(`questbox_consents_total{outcome="` + o + `"}`)
	}
	if f := src.Summary; f != nil {
		s.NewGauge("questbox_consents_pending", func() float64 {
			sum, _ := f()
			return float64(sum.PendingConsents)
		})
	}
	if f := src.OutboxDepth; f != nil {
		s.NewGauge("questbox_outbox_depth", func() float64 { return float64(f()) })
	}
	if p := src.StorePath; p != "" {
		s.NewGauge("questbox_store_size_bytes", func() float64 {
			fi, err := os.Stat(p)
			if err != nil {
				return 0
			}
			return float64(fi.Size())
		})
	}
	if f := src.Clients; f != nil {
		s.NewGauge("questbox_dashboard_clients", func() float64 { return float64(f()) })
	}
	s.RegisterMetricsWriter(func(w io.Writer) {
		if f := src.Commits; f != nil {
			vm.WriteCounterUint64(w, "questbox_store_commits_total", f())
		}
		configured, connected := false, false
		if f := src.MQTTConnected; f != nil {
			configured, connected = f()
		} else if v := m.mqtt.Load(); v >= 0 {
			configured, connected = true, v == 1
		}
		vm.WriteGaugeUint64(w, "questbox_mqtt_configured", b2u(configured))
		vm.WriteGaugeUint64(w, "questbox_mqtt_connected", b2u(connected))
		vm.WriteGaugeUint64(w, "questbox_memory_limit_bytes", memoryLimit())
	})
	return m
}

// memoryLimit is the runtime's soft memory limit in force (the daemon's
// daemon.memory_limit, or the environment's GOMEMLIMIT), 0 for none.
func memoryLimit() uint64 {
	v := debug.SetMemoryLimit(-1)
	if v == math.MaxInt64 || v < 0 {
		return 0
	}
	return uint64(v)
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// SetMQTTConnected records the MQTT connection for questbox_mqtt_connected
// when Sources.MQTTConnected is nil. It does not block.
func (m *Metrics) SetMQTTConnected(connected bool) {
	m.mqtt.Store(int32(b2u(connected)))
}

// ObserveTick records one tick: how long its own work took (agent time
// excluded: runs proceed after the tick) and whether it failed.
func (m *Metrics) ObserveTick(took time.Duration, err error) {
	m.ticks.Inc()
	if err != nil {
		m.tickErrors.Inc()
	}
	m.tick.Update(took.Seconds())
}

// ObserveEvents counts dispatches (nodes moving to running), verdicts and
// consent decisions among committed events. Each event must be observed
// once.
func (m *Metrics) ObserveEvents(evs []api.Event) {
	for _, ev := range evs {
		switch ev.Kind {
		case api.KindNode:
			if ev.To == string(api.NodeRunning) {
				m.dispatches.Inc()
			}
		case api.KindVerdict:
			m.count(m.verdicts, ev.Outcome)
		case api.KindConsent:
			m.count(m.consents, ev.Outcome)
		}
	}
}

func (m *Metrics) count(by map[string]*vm.Counter, outcome string) {
	c, ok := by[outcome]
	if !ok {
		c = by["other"]
	}
	c.Inc()
}

// WritePrometheus writes every metric in the Prometheus text format, with
// the process's own (memory, CPU, file descriptors, bytes written to
// storage as process_io_storage_written_bytes_total) after questbox's.
//
// Every family has its # HELP and # TYPE lines (exposition.go).
func (m *Metrics) WritePrometheus(w io.Writer) {
	if m.usage != nil {
		// Providers are the configured ones: the label set is bounded.
		for _, u := range m.usage() {
			p := strconv.Quote(u.Provider)
			m.set.GetOrCreateCounter(`questbox_agent_tokens_total{provider=` + p + `}`).Set(u.Tokens)
			m.set.GetOrCreateFloatCounter(`questbox_agent_cost_usd_total{provider=` + p + `}`).Set(u.CostUSD)
		}
	}
	writeExposition(w, m.set)
}

// ServeHTTP serves the metrics.
func (m *Metrics) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	m.WritePrometheus(w)
}
