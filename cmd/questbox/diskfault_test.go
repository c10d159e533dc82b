package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/questbox/questbox/internal/daemon/daemontest"
)

// tmpfs mounts a small tmpfs for a data directory (root only: CI is root).
func tmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Getuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("this test mounts a tmpfs and needs root (CI runs as root)")
		}
		t.Skip("needs root to mount a tmpfs")
	}
	dir := daemontest.ShortDir(t)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// TestFullDiskExitsTwo: a write the full SD card refuses is "store
// unavailable" (exit 2, docs/design.md, "The CLI"), nothing of it is kept,
// and once there is room the same command works.
func TestFullDiskExitsTwo(t *testing.T) {
	data := tmpfs(t, "1m")
	d := []string{"--data", data}
	must(t, 0, "", append([]string{"quest", "new", "x", "--direction", "fill the disk", "--provider", "external"}, d...)...)
	filler := filepath.Join(data, "filler")
	exec.Command("dd", "if=/dev/zero", "of="+filler, "bs=4k").Run() // until the disk is full
	var hyps []string
	for i := range 400 {
		hyps = append(hyps, strings.Repeat("a hypothesis that takes room ", 4)+string(rune('a'+i%26))+strings.Repeat("x", i))
	}
	r := must(t, 2, "", append(append([]string{"scan", "q1"}, hyps...), d...)...)
	if !strings.Contains(r.stderr, "store unavailable") || !strings.Contains(r.stderr, "no space left on device") {
		t.Errorf("scan on a full disk said %q", r.stderr)
	}
	var st struct{ Total int }
	decode(t, must(t, 0, "", append([]string{"status", "q1", "--json"}, d...)...), &st)
	if st.Total != 0 {
		t.Errorf("a refused scan left %d nodes", st.Total)
	}
	os.Remove(filler)
	must(t, 0, "", append(append([]string{"scan", "q1"}, hyps...), d...)...)
	must(t, 0, "", append([]string{"verify"}, d...)...)
}

// TestUnwritableStoreExitsTwo: a store on a file system that refuses
// writes is "store unavailable" (exit 2) for a writing command, while reads
// still answer.
func TestUnwritableStoreExitsTwo(t *testing.T) {
	data := tmpfs(t, "4m")
	d := []string{"--data", data}
	must(t, 0, "", append([]string{"quest", "new", "x", "--direction", "read only", "--provider", "external"}, d...)...)
	if out, err := exec.Command("mount", "-o", "remount,ro", data).CombinedOutput(); err != nil {
		t.Fatalf("remount read-only: %v: %s", err, out)
	}
	r := must(t, 2, "", append([]string{"scan", "q1", "h"}, d...)...)
	if !strings.Contains(r.stderr, "store unavailable") {
		t.Errorf("scan on a read-only file system said %q", r.stderr)
	}
	must(t, 0, "", append([]string{"quest", "list"}, d...)...)
}
