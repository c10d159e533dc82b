package proc

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// This process's status and io read as numbers; a process that does not
// exist reads as none.
func TestNumbersOfThisProcess(t *testing.T) {
	pid := os.Getpid()
	rss, anon, file := Memory(pid)
	if rss <= 0 || anon <= 0 || file <= 0 || anon+file > rss+4 {
		t.Fatalf("VmRSS %d, RssAnon %d, RssFile %d KiB: want positive parts that add up to VmRSS", rss, anon, file)
	}
	if _, ok := Numbers(pid, "io")["write_bytes:"]; !ok {
		t.Fatalf("no write_bytes in /proc/%d/io: %v", pid, Numbers(pid, "io"))
	}
	if m := Numbers(-1, "status"); len(m) != 0 {
		t.Fatalf("a process that does not exist reads as %v, want no values", m)
	}
}

// Memory made resident after the sampling started and just before Stop
// is in the peak: Stop samples once more (the 5 ms period alone would
// miss it). The memory is a private anonymous map outside Go's heap, so
// it adds its own 8 MiB to RssAnon whatever the heap does.
func TestPeakHoldsWhatStopSees(t *testing.T) {
	const size = 8 << 20
	p := StartPeak(os.Getpid())
	m, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	for i := 0; i < size; i += os.Getpagesize() {
		m[i] = 1
	}
	anon, file, total := p.Stop()
	if anon < size>>10 || total < anon || total < file {
		t.Fatalf("peak RssAnon %d, RssFile %d, VmRSS %d KiB with %d KiB just made resident: want the anonymous part at least that, the total at least each part", anon, file, total, size>>10)
	}
}
