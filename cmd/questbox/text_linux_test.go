package main

import (
	"os"
	"strings"
	"testing"
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
	want := []textMapping{{0x400000, 0x9c0000, 5504}, {0x9c0000, 0xfa5000, 5652}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("textMappings = %x, want %x (the writable one, the one with an anonymous page, the store and other files left alone)", got, want)
	}
}

// written is a variable of the binary's writable data: releaseText must
// leave it as the program set it.
var written = []byte("set at start")

func TestReleaseTextDropsTheBinarysPagesAndKeepsItsData(t *testing.T) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	resident := func() int64 {
		t.Helper()
		f, err := os.Open("/proc/self/smaps")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		maps, err := textMappings(f, exe)
		if err != nil {
			t.Fatal(err)
		}
		var kib int64
		for _, m := range maps {
			kib += m.rss
		}
		return kib
	}
	copy(written, "set by test!")
	before := resident()
	if before < 1024 {
		t.Fatalf("only %d KiB of the test binary's text resident before the release: nothing to measure", before)
	}
	released, err := releaseText()
	if err != nil {
		t.Fatal(err)
	}
	after := resident()
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
