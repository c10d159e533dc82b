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

// A box with 10 idle quests (each with a pending node waiting for an outside
// agent) serving a whole day at the 60 s tick commits only the 24 hourly
// saves of their wall clock, and writes under 1 MB to the disk
// (docs/design.md, "The store and its durability": SD cards wear out). What
// bbolt writes is counted from its own statistics (the pages each commit
// writes, and the meta page), which are deterministic; the kernel's count for
// the process (/proc/self/io, which other tests' leftovers in this process
// can add to) is logged beside it. bench/idle measures the daemon from
// outside, tick by tick.
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
	alloc0 := h.store.db.PagesAllocated()
	w0, _ := writeBytes()
	d.steps(24 * 60)
	w1, _ := writeBytes()
	alloc1 := h.store.db.PagesAllocated()
	commits := h.store.Commits() - before
	if commits != 24 {
		t.Errorf("a day of 1,440 idle ticks committed %d times, want 24 (the hourly saves)", commits)
	}
	// Each commit writes the pages it allocated, then one meta page.
	pages := alloc1 - alloc0
	wrote := pages + int64(commits)*int64(h.store.db.PageSize())
	t.Logf("a day of 10 idle quests: %d commits writing %d bytes (%d per hourly save); the kernel counted %d bytes for the process", commits, wrote, wrote/int64(max(commits, 1)), w1-w0)
	if wrote > 1_000_000 {
		t.Errorf("a day of 10 idle quests wrote %d bytes, want at most 1 MB", wrote)
	}
}
