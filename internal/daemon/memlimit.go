package daemon

// The daemon's soft memory limit (daemon.memory_limit): the Go runtime's
// garbage collector runs more often as the process nears it, so that a busy
// tick's garbage does not grow the heap to twice its live size (GOGC's
// 100 %) on a 512 MB box. It is a soft limit: the heap may pass it when the
// live data does, and the collector then runs back to back (capped by the
// runtime at about half the CPU). So it is lifted while the daemon opens a
// store — its check, compaction and upgrade hold more live heap than any
// tick (about 40 MiB at 100k nodes for the 8 -> 9 upgrade) — and while it
// writes and verifies a backup or stages a restore, and set again after.
//
// A GOMEMLIMIT or GOGC in the daemon's environment is the owner's own
// policy: the runtime has read it at start, and the daemon then sets
// nothing, ever (and says so).

import (
	"log/slog"
	"math"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/questbox/questbox/internal/config"
)

// noMemoryLimit is the runtime's "no limit" (debug.SetMemoryLimit's
// default).
const noMemoryLimit = math.MaxInt64

// memLimit applies daemon.memory_limit to the runtime, and lifts it
// around the phases whose live heap is larger. Safe for concurrent use.
type memLimit struct {
	log *slog.Logger
	// env names the environment variables that set the GC policy
	// ("GOMEMLIMIT=64MiB"), or is "" when none does: then the limit is
	// the config's.
	env string

	// found is the runtime's limit before the daemon set one, for stop.
	found int64

	mu     sync.Mutex
	limit  config.MemoryLimit
	lifted int // heavy phases under way
}

// newMemLimit reads the environment through getenv; it sets nothing yet.
func newMemLimit(limit config.MemoryLimit, getenv func(string) string, log *slog.Logger) *memLimit {
	var env []string
	for _, k := range []string{"GOMEMLIMIT", "GOGC"} {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return &memLimit{log: log, env: strings.Join(env, " "), limit: limit, found: debug.SetMemoryLimit(-1)}
}

// stop puts back the limit the process had before the daemon (an
// in-process daemon of the tests leaves its process as it found it).
func (m *memLimit) stop() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.env == "" {
		debug.SetMemoryLimit(m.found)
	}
}

// lift removes the limit until the returned func is called (phases may
// nest and overlap); the limit is set again when the last one ends.
func (m *memLimit) lift() (restore func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lifted++
	m.setLocked()
	return sync.OnceFunc(func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.lifted--
		m.setLocked()
	})
}

// start logs the policy once the store is open, as it is applied.
func (m *memLimit) start() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.env != "" {
		m.log.Info("memory limit: the environment sets the garbage collector's policy; daemon.memory_limit is not applied",
			"env", m.env, "memory_limit", m.limit, "effective", limitText(debug.SetMemoryLimit(-1)))
		return
	}
	m.setLocked()
	m.log.Info("memory limit: set from daemon.memory_limit (lifted while a store opens and while a backup is written)", "memory_limit", m.limit)
}

// reload applies limit if it is not the one in force, and reports
// whether it did (false when the environment sets the policy).
func (m *memLimit) reload(limit config.MemoryLimit) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	old := m.limit
	if limit == old {
		return false
	}
	m.limit = limit
	if m.env != "" {
		m.log.Warn("reload: daemon.memory_limit changed, but the environment sets the garbage collector's policy and wins; not applied",
			"env", m.env, "memory_limit", limit)
		return false
	}
	m.setLocked()
	m.log.Info("reload: daemon.memory_limit applied", "from", old, "to", limit)
	return true
}

// setLocked sets the runtime's limit: none while a phase lifts it or the
// config says off, else the config's. The environment's is never touched.
func (m *memLimit) setLocked() {
	if m.env != "" {
		return
	}
	v := int64(m.limit)
	if m.lifted > 0 || m.limit == config.MemoryLimitOff {
		v = noMemoryLimit
	}
	debug.SetMemoryLimit(v)
}

// limitText is a runtime limit as the config writes it.
func limitText(v int64) string {
	if v == noMemoryLimit {
		return config.MemoryLimitOff.String()
	}
	return config.MemoryLimit(v).String()
}
