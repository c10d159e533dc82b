package proc

import (
	"os"
	"testing"
)

// This process's status and io read as numbers, and its peak holds at
// least what it has resident: a sampler that read nothing, or a status
// line parsed wrong, fails here.
func TestNumbersAndPeakOfThisProcess(t *testing.T) {
	pid := os.Getpid()
	rss, anon, file := Memory(pid)
	if rss <= 0 || anon <= 0 || file <= 0 || anon+file > rss+4 {
		t.Fatalf("VmRSS %d, RssAnon %d, RssFile %d KiB: want positive parts that add up to VmRSS", rss, anon, file)
	}
	if _, ok := Numbers(pid, "io")["write_bytes:"]; !ok {
		t.Fatalf("no write_bytes in /proc/%d/io: %v", pid, Numbers(pid, "io"))
	}
	p := StartPeak(pid)
	hold := make([]byte, 8<<20)
	for i := range hold {
		hold[i] = 1
	}
	pa, pf, pt := p.Stop()
	_, after, _ := Memory(pid)
	if pt < pa || pt < pf || pa+64 < after { // 64 KiB: what reading the file after Stop may add
		t.Fatalf("peak anon %d, file %d, total %d KiB with %d KiB anonymous resident after: want the peak at least that", pa, pf, pt, after)
	}
	if len(hold) == 0 {
		t.Fatal("unreachable: keeps hold live")
	}
	if m := Numbers(-1, "status"); len(m) != 0 {
		t.Fatalf("a process that does not exist reads as %v, want no values", m)
	}
}
