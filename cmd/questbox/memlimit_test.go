package main

import (
	"bufio"
	"io"
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
	"github.com/questbox/questbox/internal/daemon/daemontest"
)

// keepMemoryLimit puts back the test process's limit when t ends.
func keepMemoryLimit(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
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
	dir := daemontest.ShortDir(t)
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
