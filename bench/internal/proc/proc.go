// Package proc reads what the harnesses under bench/ measure of a running
// daemon in /proc: its memory (status), what it wrote (io), and the
// highest memory seen while it works (Peak).
package proc

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Numbers reads /proc/PID/<file>, a file of "Name: value" lines (status,
// io), into its numeric values keyed by the name with its colon
// ("VmHWM:", "write_bytes:"); the memory lines of status are in KiB. A
// process that is gone reads as no values.
func Numbers(pid int, file string) map[string]int64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, file))
	m := map[string]int64{}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		if v, err := strconv.ParseInt(f[1], 10, 64); err == nil {
			m[f[0]] = v
		}
	}
	return m
}

// Memory reads VmRSS, RssAnon and RssFile (KiB) of pid.
func Memory(pid int) (rss, anon, file int64) {
	s := Numbers(pid, "status")
	return s["VmRSS:"], s["RssAnon:"], s["RssFile:"]
}

// Peak keeps the highest RssAnon, RssFile and VmRSS of a process while it
// runs, sampled every 5 ms. The two parts' highest samples need not fall
// on the same sample, and a spike shorter than the period can be missed:
// VmHWM stays the peak of the total.
type Peak struct {
	done              chan struct{}
	wg                sync.WaitGroup
	anon, file, total int64 // KiB; written by the sampler until Stop
}

// StartPeak starts sampling pid, with a first sample before it returns.
func StartPeak(pid int) *Peak {
	p := &Peak{done: make(chan struct{})}
	sample := func() {
		rss, anon, file := Memory(pid)
		p.anon, p.file, p.total = max(p.anon, anon), max(p.file, file), max(p.total, rss)
	}
	sample() // what Start was called on
	p.wg.Go(func() {
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.done:
				sample() // what Stop was called on
				return
			case <-t.C:
			}
			sample()
		}
	})
	return p
}

// Stop ends the sampling (after one last sample) and returns the highest
// RssAnon, RssFile and VmRSS seen, in KiB.
func (p *Peak) Stop() (anon, file, total int64) {
	close(p.done)
	p.wg.Wait()
	return p.anon, p.file, p.total
}
