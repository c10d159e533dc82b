package daemon

import (
	"log/slog"
	"math"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/questbox/questbox/internal/config"
)

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

// keepMemoryLimit puts back the test process's limit when t ends.
func keepMemoryLimit(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
}
