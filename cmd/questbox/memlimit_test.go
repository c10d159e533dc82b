package main

import (
	"bufio"
	"io"
	"log/slog"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/questbox/questbox/internal/buildtest"
	"github.com/questbox/questbox/internal/config"
)

// keepMemoryLimit puts back the test process's limit when t ends.
func keepMemoryLimit(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
}

func noEnv(string) string { return "" }

// TestMemLimitSetsTheConfigsLimit: the config's limit reaches the runtime
// (read back with SetMemoryLimit(-1)), is lifted while a phase runs (two
// overlapping), is set again after, a reload changes it, "off" removes it,
// and stop puts back what the process had.
func TestMemLimitSetsTheConfigsLimit(t *testing.T) {
	keepMemoryLimit(t)
	debug.SetMemoryLimit(math.MaxInt64)
	m := newMemLimit(24*config.MemoryLimit(config.MiB), noEnv, slog.New(slog.DiscardHandler))
	current := func() int64 { return debug.SetMemoryLimit(-1) }

	m.start()
	if got := current(); got != 24<<20 {
		t.Fatalf("after start: limit %d, want %d", got, 24<<20)
	}
	endA := m.lift()
	endB := m.lift()
	if got := current(); got != math.MaxInt64 {
		t.Errorf("during two phases: limit %d, want none", got)
	}
	endA()
	endA() // a second call changes nothing
	if got := current(); got != math.MaxInt64 {
		t.Errorf("with one phase still under way: limit %d, want none", got)
	}
	endB()
	if got := current(); got != 24<<20 {
		t.Errorf("after the phases: limit %d, want %d", got, 24<<20)
	}
	if !m.reload(32 * config.MemoryLimit(config.MiB)) {
		t.Error("reload to 32MiB: not applied")
	}
	if got := current(); got != 32<<20 {
		t.Errorf("after the reload: limit %d, want %d", got, 32<<20)
	}
	if m.reload(32 * config.MemoryLimit(config.MiB)) {
		t.Error("reload to the limit in force: reported as applied")
	}
	m.reload(config.MemoryLimitOff)
	if got := current(); got != math.MaxInt64 {
		t.Errorf("after a reload to off: limit %d, want none", got)
	}
	m.reload(40 * config.MemoryLimit(config.MiB))
	end := m.lift()
	m.reload(48 * config.MemoryLimit(config.MiB))
	if got := current(); got != math.MaxInt64 {
		t.Errorf("a reload during a phase: limit %d, want none until it ends", got)
	}
	end()
	if got := current(); got != 48<<20 {
		t.Errorf("after a phase that a reload changed: limit %d, want %d", got, 48<<20)
	}
	m.stop()
	if got := current(); got != math.MaxInt64 {
		t.Errorf("after stop: limit %d, want the process's own (none)", got)
	}
}

// TestMemLimitEnvironmentWins: with GOMEMLIMIT or GOGC set, the daemon
// sets no limit, not even around a phase or at a reload, and says so.
func TestMemLimitEnvironmentWins(t *testing.T) {
	for _, k := range []string{"GOMEMLIMIT", "GOGC"} {
		t.Run(k, func(t *testing.T) {
			keepMemoryLimit(t)
			debug.SetMemoryLimit(50 << 20) // as the runtime read it from the environment
			var logs strings.Builder
			getenv := func(name string) string {
				if name == k {
					return "50MiB"
				}
				return ""
			}
			m := newMemLimit(24*config.MemoryLimit(config.MiB), getenv, slog.New(slog.NewTextHandler(&logs, nil)))
			m.start()
			m.lift()()
			if m.reload(32 * config.MemoryLimit(config.MiB)) {
				t.Error("a reload was applied over the environment")
			}
			m.stop()
			if got := debug.SetMemoryLimit(-1); got != 50<<20 {
				t.Errorf("limit %d, want the environment's %d", got, 50<<20)
			}
			if want := k + "=50MiB"; !strings.Contains(logs.String(), want) || !strings.Contains(logs.String(), "not applied") {
				t.Errorf("the log does not say %s wins:\n%s", k, logs.String())
			}
		})
	}
}

// TestCheckConfigMemoryLimit: a bad daemon.memory_limit is named with its
// line by run --check-config, and run itself refuses it before setting
// anything.
func TestCheckConfigMemoryLimit(t *testing.T) {
	keepMemoryLimit(t)
	debug.SetMemoryLimit(math.MaxInt64)
	for _, tc := range []struct{ value, want string }{
		{`"lots"`, `:2:17: daemon.memory_limit: "lots" is not a memory limit (use 24MiB, 64MiB, or "off" for none)`},
		{`"2MiB"`, `daemon.memory_limit: 2MiB is below the minimum 8MiB`},
	} {
		bad := writeConfig(t, "[daemon]\nmemory_limit = "+tc.value+"\n")
		for _, args := range [][]string{{"run", "--check-config"}, {"run", "--gpio", "sim"}} {
			r := must(t, 1, "", append(args, "--config", bad, "--data", t.TempDir())...)
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("%s with memory_limit = %s does not say %q:\n%s", strings.Join(args, " "), tc.value, tc.want, r.stderr)
			}
			if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
				t.Errorf("%s with memory_limit = %s set a limit: %d", strings.Join(args, " "), tc.value, got)
			}
		}
	}
	good := writeConfig(t, "[daemon]\nmemory_limit = \"off\"\n")
	must(t, 0, "", "run", "--check-config", "--config", good, "--data", t.TempDir())
}

// TestDaemonMemoryLimit runs real daemons: the config's limit is the one
// /metrics reports once the daemon is ready, a SIGHUP applies a changed
// value (and "off"), and a GOMEMLIMIT in the environment wins over the
// config.
func TestDaemonMemoryLimit(t *testing.T) {
	bin := buildtest.Questbox(t)
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "GOMEMLIMIT=") || strings.HasPrefix(kv, "GOGC=")
	})
	dir := shortDir(t)
	cfg := filepath.Join(dir, "questbox.toml")
	write := func(limit string) {
		t.Helper()
		text := "[network]\nprobe = \"\"\n[dashboard]\nread = \"public\"\n[daemon]\nmemory_limit = " + limit + "\n"
		if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	start := func(env []string, data string) (*procDaemon, func() string) {
		t.Helper()
		addr := freeAddr(t)
		d := startProcEnv(t, env, bin, "--config", cfg, "--data", filepath.Join(dir, data), "--tick", "1h", "--gpio", "sim", "--listen", addr)
		waitFor(t, "the daemon to be ready", func() bool { return strings.Contains(d.logText(), "questbox is running") })
		return d, func() string {
			t.Helper()
			return scrapeMetric(t, "http://"+addr+"/metrics", "questbox_memory_limit_bytes")
		}
	}

	write(`"32MiB"`)
	d, limit := start(env, "a")
	if got := limit(); got != "33554432" {
		t.Errorf("memory_limit = 32MiB: questbox_memory_limit_bytes %s, want 33554432\n%s", got, d.logText())
	}
	hup := func(value, logged, want string) {
		t.Helper()
		write(value)
		if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the reload to log "+logged, func() bool { return strings.Contains(d.logText(), logged) })
		if got := limit(); got != want {
			t.Errorf("after a reload to %s: questbox_memory_limit_bytes %s, want %s\n%s", value, got, want, d.logText())
		}
	}
	hup(`"40MiB"`, "to=40MiB", "41943040")
	hup(`"off"`, "to=off", "0")

	write(`"32MiB"`)
	e, limit := start(append(env, "GOMEMLIMIT=50MiB"), "b")
	if got := limit(); got != "52428800" {
		t.Errorf("GOMEMLIMIT=50MiB over memory_limit = 32MiB: questbox_memory_limit_bytes %s, want 52428800\n%s", got, e.logText())
	}
	if log := e.logText(); !strings.Contains(log, "GOMEMLIMIT=50MiB") || !strings.Contains(log, "daemon.memory_limit is not applied") {
		t.Errorf("the log does not say the environment wins:\n%s", log)
	}
}

// scrapeMetric is the value of the series name at url.
func scrapeMetric(t *testing.T, url, name string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %s\n%s", url, resp.Status, b)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			return v
		}
	}
	t.Fatalf("GET %s: no %s", url, name)
	return ""
}
