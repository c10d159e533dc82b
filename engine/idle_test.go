package engine

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// writeBytes is what this process had the kernel write to the disk so far
// (/proc/self/io write_bytes); false where the kernel does not say.
func writeBytes() (int64, bool) {
	raw, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0, false
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(l, "write_bytes:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// A box with 10 idle quests (each with a pending node waiting for an
// outside agent) serving a whole day at the 60 s tick commits only the 24
// hourly saves of their wall clock, and writes well under 1 MB to the disk
// (SPEC §3: SD cards wear out). bench/idle measures the same from outside,
// on the daemon, tick by tick.
func TestIdleDayWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("1,440 ticks")
	}
	h := newHarness(t, Options{})
	for i := range 10 {
		q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal; s.Name = fmt.Sprint("idle ", i) })
		if _, err := h.e.Scan(q.ID, []string{fmt.Sprint("wait for an outside agent ", i)}); err != nil {
			t.Fatal(err)
		}
	}
	d := h.serve()
	before := h.store.Commits()
	w0, ok := writeBytes()
	d.steps(24 * 60)
	w1, _ := writeBytes()
	commits := h.store.Commits() - before
	if commits != 24 {
		t.Errorf("a day of 1,440 idle ticks committed %d times, want 24 (the hourly saves)", commits)
	}
	if ok {
		wrote := w1 - w0
		t.Logf("a day of 10 idle quests: %d commits, %d bytes written (%d per hourly save)", commits, wrote, wrote/int64(max(commits, 1)))
		if wrote > 1<<20 {
			t.Errorf("a day of 10 idle quests wrote %d bytes, want at most 1 MiB", wrote)
		}
	}
}
