package pagecache

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// resident counts the pages of path in the page cache (mincore over a map
// of it; mapping does not bring pages in).
func resident(t *testing.T, path string, size int) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	vec := make([]byte, (size+os.Getpagesize()-1)/os.Getpagesize())
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatal(errno)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

// TestSettleDropsTheCopyFromTheCache: a file just written, as cp writes
// the seeded store, is in the page cache (dirty); Settle leaves none of
// it there, and its bytes on the disk.
func TestSettleDropsTheCopyFromTheCache(t *testing.T) {
	path := filepath.Join(t.TempDir(), "questbox.db")
	const size = 4 << 20
	want := make([]byte, size)
	for i := range want {
		want[i] = byte(i / 4096)
	}
	if err := os.WriteFile(path, want, 0o600); err != nil {
		t.Fatal(err)
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(path, &fs); err != nil {
		t.Fatal(err)
	}
	if fs.Type == unix.TMPFS_MAGIC || fs.Type == unix.RAMFS_MAGIC {
		t.Skip("the temporary directory is in memory: its pages cannot leave the cache")
	}
	if n := resident(t, path, size); n == 0 {
		t.Skip("this file system does not keep what was just written in the page cache")
	}
	if err := Settle(path); err != nil {
		t.Fatal(err)
	}
	if n := resident(t, path, size); n != 0 {
		t.Fatalf("%d pages of the settled copy are still in the page cache", n)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatal("the settled copy's bytes changed")
	}
}
