//go:build !unix

package engine

import "time"

// cpuTime is not measured here: the benchmarks report 0.
func cpuTime() time.Duration { return 0 }

// minorFaults is not measured here: the benchmarks report 0.
func minorFaults() int64 { return 0 }
