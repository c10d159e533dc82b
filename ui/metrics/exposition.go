package metrics

import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"sync"

	vm "github.com/VictoriaMetrics/metrics"
)

// The exposition's metadata. Prometheus's text format wants a # HELP and
// a # TYPE line before each metric family, and `promtool check metrics`
// fails without them. The library writes them only when its one
// process-wide switch is on (vm.ExposeMetadata), and then with empty help
// texts; WritePrometheus fills those in from help below, and puts right
// the few process metrics whose names or types the format's rules refuse.

var exposeMetadata sync.Once

// help is what each of questbox's metric families means.
var help = map[string]string{
	"questbox_tick_duration_seconds": "How long a tick's own work took (agent runs proceed after it).",
	"questbox_ticks_total":           "Ticks run since the daemon started.",
	"questbox_tick_errors_total":     "Ticks that failed since the daemon started.",
	"questbox_dispatches_total":      "Nodes dispatched to an agent (moved to running) since the daemon started.",
	"questbox_verdicts_total":        "Verdicts since the daemon started, by outcome.",
	"questbox_consents_total":        "Consent events since the daemon started, by outcome.",
	"questbox_consents_pending":      "Consent requests the button can still answer (expired ones are not counted).",
	"questbox_outbox_depth":          "Committed events not yet delivered to the slowest durable consumer (MQTT).",
	"questbox_store_size_bytes":      "Size of the store file.",
	"questbox_store_commits_total":   "Write transactions of the store since the daemon started.",
	"questbox_dashboard_clients":     "Open dashboard websockets.",
	"questbox_agent_tokens_total":    "Tokens the runs of each provider used since the daemon started: as the provider reported them, else estimated.",
	"questbox_agent_cost_usd_total":  "US dollars the runs of each provider cost since the daemon started, as their agent CLI reported it (providers that report no cost stay at 0).",
	"questbox_mqtt_configured":       "1 when MQTT is configured.",
	"questbox_mqtt_connected":        "1 while the MQTT broker connection is up.",
	"questbox_memory_limit_bytes":    "The Go runtime's soft memory limit in force (daemon.memory_limit, or GOMEMLIMIT from the environment); 0 for none. It is lifted while a store opens and while a backup is written.",
}

// renamed are process metrics of the library whose names the format's
// rules refuse (a counter ends in _total; only histograms and summaries
// have _count series).
var renamed = map[string]string{
	"go_cgo_calls_count": "go_cgo_calls_total",
	"go_gc_forced_count": "go_gc_forced_total",
	"go_cpu_count":       "go_cpus",
}

// typeOf corrects the type the library gives a family: what counts up
// since the process started (its name ends in _total) is a counter.
func typeOf(family, typ string) string {
	if strings.HasSuffix(family, "_total") && typ == "gauge" {
		return "counter"
	}
	return typ
}

func helpOf(family string) string {
	if h, ok := help[family]; ok {
		return h
	}
	switch {
	case strings.HasPrefix(family, "go_"):
		return "Go runtime metric " + family + " (github.com/VictoriaMetrics/metrics)."
	case strings.HasPrefix(family, "process_"):
		return "Process metric " + family + " (github.com/VictoriaMetrics/metrics)."
	}
	return "questbox metric " + family + "."
}

// annotate copies the library's exposition in to w with the metadata
// completed and the refused names put right.
func annotate(w io.Writer, in []byte) {
	out := bufio.NewWriter(w)
	defer out.Flush()
	for line := range bytes.Lines(in) {
		s := strings.TrimSuffix(string(line), "\n")
		switch {
		case strings.HasPrefix(s, "# HELP "):
			family, _, _ := strings.Cut(strings.TrimPrefix(s, "# HELP "), " ")
			family = rename(family)
			out.WriteString("# HELP " + family + " " + helpOf(family) + "\n")
		case strings.HasPrefix(s, "# TYPE "):
			family, typ, _ := strings.Cut(strings.TrimPrefix(s, "# TYPE "), " ")
			family = rename(family)
			out.WriteString("# TYPE " + family + " " + typeOf(family, typ) + "\n")
		default:
			i := strings.IndexAny(s, "{ ")
			if i > 0 {
				if to, ok := renamed[s[:i]]; ok {
					s = to + s[i:]
				}
			}
			out.WriteString(s + "\n")
		}
	}
}

func rename(family string) string {
	if to, ok := renamed[family]; ok {
		return to
	}
	return family
}

// writeExposition writes the set and the process metrics with their
// metadata.
func writeExposition(w io.Writer, set *vm.Set) {
	var b bytes.Buffer
	set.WritePrometheus(&b)
	vm.WriteProcessMetrics(&b)
	annotate(w, b.Bytes())
}
