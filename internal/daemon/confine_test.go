package daemon

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/questbox/questbox/internal/config"
	"github.com/questbox/questbox/internal/confine"
)

// The paths no agent may reach: the data directory, the config file, the
// release key, the control socket and every secret file the config
// names.
func TestHiddenPaths(t *testing.T) {
	c, err := config.Parse([]byte(`
[daemon]
data = "/srv/qb/data"
socket = "/run/qb/questbox.sock"
[mqtt]
broker = "ssl://127.0.0.1:8883"
username = "box"
password_file = "/etc/qb/mqtt.password"
cert_file = "/etc/qb/box.crt"
key_file = "/etc/qb/box.key"
[dashboard]
password_file = "/etc/qb/dashboard.password"
`), "/etc/qb/questbox.toml")
	if err != nil {
		t.Fatal(err)
	}
	got := hiddenPaths(c)
	for _, want := range []string{"/srv/qb/data", "/etc/qb/questbox.toml", "/etc/qb/release.pub", "/run/qb/questbox.sock",
		"/etc/qb/mqtt.password", "/etc/qb/box.key", "/etc/qb/dashboard.password"} {
		if !slices.Contains(got, want) {
			t.Errorf("hidden paths %v lack %s", got, want)
		}
	}
}

// Every command provider the wiring builds is confined; one whose write
// directories overlap the data directory cannot run, and says why.
func TestWiringConfinesCommandProviders(t *testing.T) {
	data := t.TempDir()
	c, err := config.Parse([]byte(`
[providers.ok]
type = "command"
argv = ["/bin/true"]
[providers.greedy]
type = "command"
argv = ["/bin/true"]
write = ["`+filepath.Dir(data)+`"]
`), filepath.Join(t.TempDir(), "questbox.toml"))
	if err != nil {
		t.Fatal(err)
	}
	c.Daemon.Data = data
	w := newWiring(c, func(string) string { return "" }, 0, nil)
	t.Cleanup(w.close)
	if w.confineErr != nil {
		t.Fatal(w.confineErr)
	}
	lc, ok := w.providers["ok"].(redactedProvider).p.(meteredProvider).p.(*lazyCommand)
	if !ok || lc.cfg.Confine == nil {
		t.Errorf("provider ok: %#v, want a confined command", w.providers["ok"])
	}
	if err := w.problems["greedy"]; err == nil || !strings.Contains(err.Error(), "overlaps hidden path "+data) {
		t.Errorf("provider greedy: %v, want it refused for writing over the data directory", err)
	}
	if _, ok := w.providers["greedy"]; ok {
		t.Error("provider greedy is registered")
	}
}

// The start log says once what confinement agents get: an info line when
// it is whole, else one warning naming each layer not applied and why;
// selftest prints the report.
func TestConfinementIsReported(t *testing.T) {
	c := config.Default()
	c.Daemon.Data = t.TempDir()
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	l, err := newLauncher(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	logConfinement(context.Background(), log, l, nil)
	if r := l.Report(); r.Complete() {
		if !strings.Contains(buf.String(), `level=INFO msg="agents run confined" report="applied: session`) {
			t.Errorf("start log: %s", buf.String())
		}
	} else if os.Getenv("CI") == "true" {
		t.Errorf("confinement is not whole under CI: %s", r)
	}

	buf.Reset()
	l, err = confine.New(confine.Config{Hidden: hiddenPaths(c), Runs: t.TempDir(), Without: []confine.Layer{confine.Namespaces}})
	if err != nil {
		t.Fatal(err)
	}
	logConfinement(context.Background(), log, l, nil)
	if lines := strings.Count(buf.String(), "\n"); lines != 1 || !strings.Contains(buf.String(), `level=WARN`) ||
		!strings.Contains(buf.String(), `not_applied="namespaces (disabled); network namespace (disabled; instead`) {
		t.Errorf("start log without namespaces (%d lines): %s", lines, buf.String())
	}

	if line := ConfinementLine(context.Background(), c); !strings.HasPrefix(line, "confinement: applied: session") {
		t.Errorf("selftest says %q", line)
	}
}
