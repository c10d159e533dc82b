//go:build linux

package confine

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// launcherEnv names a questbox binary to benchmark as the launcher (the
// test binary serves otherwise: larger init, same layers).
const launcherEnv = "QUESTBOX_CONFINE_LAUNCHER"

// benchRun runs /bin/true to its end, confined by l when l is not nil:
// the same harness measures what the confinement adds to a run. Beside
// the wall time it reports the CPU time the daemon's side spends (this
// process: the spec, the temporary directory, the fork), the run's own
// CPU time (user and system, the launcher's and the agent's: the same
// process) and its peak RSS, which for a program as small as true is the
// launcher's, since the agent replaces the launcher in place.
func benchRun(b *testing.B, l *Launcher, r Run) {
	b.Helper()
	var cpu time.Duration
	var rss int64
	self := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			b.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := self()
	for b.Loop() {
		cmd := exec.Command("/bin/true")
		cmd.Env = []string{"PATH=/usr/bin:/bin"}
		cleanup := func() {}
		if l != nil {
			var err error
			if cleanup, err = l.Confine(cmd, r); err != nil {
				b.Fatal(err)
			}
		}
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		cleanup()
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			rss = max(rss, int64(ru.Maxrss))
		}
	}
	b.ReportMetric(float64((self()-start).Microseconds())/1000/float64(b.N), "daemon-cpu-ms/op")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(rss), "peak-rss-KiB")
}

func BenchmarkUnconfinedRun(b *testing.B) { benchRun(b, nil, Run{}) }

func BenchmarkConfinedRun(b *testing.B) {
	for _, m := range []struct {
		name    string
		without []Layer
		r       Run
	}{
		{"all layers, local only", nil, Run{}},
		{"all layers, network", nil, Run{Network: true}},
		{"without namespaces", []Layer{Namespaces}, Run{}},
	} {
		b.Run(m.name, func(b *testing.B) {
			l, err := New(Config{Exe: os.Getenv(launcherEnv), Hidden: []string{b.TempDir()}, Runs: b.TempDir() + "/runs", Without: m.without})
			if err != nil {
				b.Fatal(err)
			}
			b.Logf("%s", l.Probe(b.Context()))
			benchRun(b, l, m.r)
		})
	}
}
