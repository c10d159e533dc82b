package daemon

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

func TestTextMappingsOnlyTheBinarysUnwrittenReadOnlyOnes(t *testing.T) {
	const smaps = `00400000-009c0000 r-xp 00000000 08:01 123 /usr/bin/questbox
Size:               5888 kB
Rss:                5504 kB
Anonymous:             0 kB
VmFlags: rd ex mr mw me
009c0000-00fa5000 r--p 005c0000 08:01 123 /usr/bin/questbox
Rss:                5652 kB
Anonymous:             0 kB
00fa5000-01020000 rw-p 00ba5000 08:01 123 /usr/bin/questbox
Rss:                 364 kB
Anonymous:           100 kB
01020000-01030000 r-xp 00000000 08:01 124 /usr/bin/questbox
Rss:                  64 kB
Anonymous:             4 kB
7f0000000000-7f0002000000 r--s 00000000 08:01 200 /var/lib/questbox/questbox.db
Rss:                4452 kB
Anonymous:             0 kB
7f0003000000-7f0003100000 rw-p 00000000 00:00 0 
Rss:                1024 kB
Anonymous:          1024 kB
7f0004000000-7f0004010000 r-xp 00000000 08:01 125 /usr/lib/other so
Rss:                  64 kB
Anonymous:             0 kB
`
	got, err := textMappings(strings.NewReader(smaps), "/usr/bin/questbox")
	if err != nil {
		t.Fatal(err)
	}
	want := []textMapping{{0x400000, 0x9c0000, 0, 5504}, {0x9c0000, 0xfa5000, 0x5c0000, 5652}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("textMappings = %x, want %x (the writable one, the one with an anonymous page, the store and other files left alone)", got, want)
	}
}

// written is a variable of the binary's writable data: releaseText must
// leave it as the program set it.
var written = []byte("set at start")

// selfText reads this process's smaps and the mappings of its binary
// that releaseText takes.
func selfText(t *testing.T) (exe string, smaps []byte, maps []textMapping) {
	t.Helper()
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	if smaps, err = os.ReadFile("/proc/self/smaps"); err != nil {
		t.Fatal(err)
	}
	if maps, err = textMappings(bytes.NewReader(smaps), exe); err != nil {
		t.Fatal(err)
	}
	return exe, smaps, maps
}

func TestReleaseTextDropsTheBinarysPagesAndKeepsItsData(t *testing.T) {
	resident := func() (kib, size int64) {
		t.Helper()
		_, _, maps := selfText(t)
		for _, m := range maps {
			kib += m.rss
			size += int64(m.end-m.start) / 1024
		}
		return kib, size
	}
	copy(written, "set by test!")
	before, size := resident()
	if before < size/2 {
		// Released before in this process (go test -count), and read
		// back a page at a time since.
		t.Skipf("only %d KiB of the test binary's %d KiB of text and read-only data resident before the release: nothing to measure", before, size)
	}
	released, err := releaseText()
	if err != nil {
		t.Fatal(err)
	}
	after, _ := resident()
	t.Logf("resident text and read-only data: %d KiB before, %d KiB released, %d KiB after", before, released, after)
	if released < before/2 {
		t.Errorf("released %d KiB of %d resident", released, before)
	}
	// What runs between the release and the measure (this test, the
	// smaps read) faults some pages back in, never the whole.
	if after > before/2 {
		t.Errorf("%d KiB of the binary resident after the release, %d before: not released", after, before)
	}
	if string(written) != "set by test!" {
		t.Errorf("a variable of the binary's data reads %q after the release", written)
	}
}

// After the release the binary is read a page at a time: its mappings are
// advised MADV_RANDOM (smaps shows "rr"), and its cached pages in their
// ranges are dropped, so that a fault maps no cached neighbours. The check
// is on the read-only data and function tables: the code runs while it is
// released, and a kernel that caches it in large folios (Linux 6.18 here:
// 2 MiB) keeps every folio one running page maps.
func TestReleaseTextUncachesTheBinarysTables(t *testing.T) {
	exe, _, _ := selfText(t)
	// tables is the binary's read-only mapping that is not code.
	tables := func() textMapping {
		t.Helper()
		_, smaps, maps := selfText(t)
		for _, m := range maps {
			if bytes.Contains(smaps, fmt.Appendf(nil, "%08x-%08x r--p ", m.start, m.end)) {
				return m
			}
		}
		t.Fatalf("no read-only mapping of %s that is not code in smaps", exe)
		return textMapping{}
	}
	// cached counts the pages of m's range the page cache holds (mincore,
	// on a mapping of our own).
	cached := func(m textMapping) (in, of int) {
		t.Helper()
		f, err := os.Open(exe)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		b, err := unix.Mmap(int(f.Fd()), int64(m.offset), int(m.end-m.start), unix.PROT_READ, unix.MAP_SHARED)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Munmap(b)
		vec := make([]byte, len(b)/os.Getpagesize())
		if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
			t.Fatal(errno)
		}
		for _, v := range vec {
			in += int(v & 1)
		}
		return in, len(vec)
	}
	// The test binary, just linked, written out as an installed binary
	// is (the cache drops only clean pages), and read whole: cached.
	f, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	err = f.Sync()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadFile(exe); err != nil {
		t.Fatal(err)
	}
	m := tables()
	if in, of := cached(m); in < of/2 {
		t.Skipf("only %d of the %d pages of the test binary's tables are cached before the release: nothing to measure", in, of)
	}
	if _, err := releaseText(); err != nil {
		t.Fatal(err)
	}
	m = tables()
	in, of := cached(m)
	t.Logf("%d of the %d pages of the binary's tables cached after the release", in, of)
	if in > of/2 {
		t.Errorf("%d of the %d pages of the binary's tables still cached after the release", in, of)
	}
	_, smaps, _ := selfText(t)
	// Each mapping's VmFlags line (its last) follows its first line.
	var mapping string
	read := 0
	for line := range strings.SplitSeq(string(smaps), "\n") {
		flags, ok := strings.CutPrefix(line, "VmFlags:")
		if !ok {
			if f := strings.Fields(line); len(f) >= 6 && !strings.HasSuffix(f[0], ":") {
				mapping = line
			}
			continue
		}
		f := strings.Fields(mapping)
		if len(f) < 6 || strings.Join(f[5:], " ") != exe || strings.ContainsRune(f[1], 'w') {
			continue
		}
		read++
		if !slices.Contains(strings.Fields(flags), "rr") {
			t.Errorf("the binary's mapping %q is not advised MADV_RANDOM after the release: VmFlags:%s", mapping, flags)
		}
	}
	if read == 0 {
		t.Error("no read-only mapping of the binary in smaps")
	}
}

// While busy the daemon takes the binary's pages out of its page tables
// again, but only in a stretch in which the store committed: a quiet
// daemon keeps what it maps.
func TestUnmapTextOnlyAfterACommit(t *testing.T) {
	maps, err := selfTextMappings()
	if err != nil {
		t.Fatal(err)
	}
	var size int64 // KiB
	for _, m := range maps {
		size += int64(m.end-m.start) / 1024
		// Every page of the binary's read-only mappings mapped.
		if err := m.advise(unix.MADV_POPULATE_READ); err != nil {
			t.Skipf("madvise(MADV_POPULATE_READ): %v (Linux 5.14 and later)", err)
		}
	}
	resident := func() (kib int64) {
		t.Helper()
		_, _, maps := selfText(t)
		for _, m := range maps {
			kib += m.rss
		}
		return kib
	}
	commits := uint64(7)
	count := func() uint64 { return commits }
	if got := unmapTextIfCommitted(maps, count, 7); got != 7 {
		t.Errorf("unmapTextIfCommitted returned %d, want the count now, 7", got)
	}
	if kib := resident(); kib < size*9/10 {
		t.Errorf("%d KiB of the binary's %d KiB resident after a look with no commit since the last: unmapped", kib, size)
	}
	commits = 8
	if got := unmapTextIfCommitted(maps, count, 7); got != 8 {
		t.Errorf("unmapTextIfCommitted returned %d, want the count now, 8", got)
	}
	// What runs between the unmap and the measure (this test, the smaps
	// read) maps some pages back, never the whole.
	if kib := resident(); kib > size/2 {
		t.Errorf("%d KiB of the binary's %d KiB resident after a look that found a commit: not unmapped", kib, size)
	}
}
