package metrics

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/questbox/questbox/ui/api"
)

// TestExpositionPassesPromtool checks the whole exposition — every
// questbox family, every source set, and the process's own — with
// Prometheus's own linter: each family has # HELP and # TYPE lines, and
// names and types follow the format's rules. It had no metadata at all
// before.
func TestExpositionPassesPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool is not installed on CI: the Makefile's TEST_DEBS must install Debian's prometheus package")
		}
		t.Skip("needs promtool: apt-get install prometheus (or make test, which installs it)")
	}
	store := filepath.Join(t.TempDir(), "questbox.db")
	os.WriteFile(store, make([]byte, 4096), 0o600)
	m := New(Sources{
		Summary:       func() (api.Summary, error) { return api.Summary{PendingConsents: 1}, nil },
		OutboxDepth:   func() uint64 { return 5 },
		StorePath:     store,
		Commits:       func() uint64 { return 7 },
		MQTTConnected: func() (bool, bool) { return true, true },
		Clients:       func() int { return 2 },
		AgentUsage: func() []ProviderUsage {
			return []ProviderUsage{{Provider: "a", Tokens: 3, CostUSD: 0.5}, {Provider: "b"}}
		},
	})
	m.ObserveTick(3*time.Millisecond, nil)
	m.ObserveTick(40*time.Millisecond, errors.New("disk full"))
	m.ObserveEvents([]api.Event{{Kind: api.KindVerdict, Outcome: "PASS"}, {Kind: api.KindNode, To: string(api.NodeRunning)}})
	var b bytes.Buffer
	m.WritePrometheus(&b)
	for _, family := range []string{"questbox_tick_duration_seconds histogram", "questbox_ticks_total counter",
		"questbox_consents_pending gauge", "questbox_verdicts_total counter", "questbox_mqtt_connected gauge",
		"questbox_store_commits_total counter", "process_io_storage_written_bytes_total counter"} {
		if !strings.Contains(b.String(), "\n# TYPE "+family+"\n") && !strings.HasPrefix(b.String(), "# TYPE "+family+"\n") {
			t.Errorf("no # TYPE %s line", family)
		}
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(b.Bytes())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s\nexposition:\n%s", err, out, b.String())
	}
}
