//go:build unix

package engine

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user and system) this process has used. On a
// shared machine it measures the benchmarks' work far more steadily than
// the wall clock, which also counts the time other processes held the CPU.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// minorFaults is how many page faults this process took that needed no
// I/O: on the store's map, a page of the page cache mapped in again
// after the store released it (engine/commit, Store.releaseMapped).
func minorFaults() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return int64(ru.Minflt)
}
