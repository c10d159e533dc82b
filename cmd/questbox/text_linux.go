package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// releaseText takes the daemon's own read-only pages of its binary (the
// code, the read-only data, the function tables) out of its resident
// memory: madvise(MADV_DONTNEED) over each mapping of the executable that
// is not writable and holds no anonymous page (textMappings). It returns
// the KiB that were resident in them.
//
// Start-up runs code and reads tables that a busy cycle does not touch
// again (the configuration's parsing, the store's checks and migrations,
// the packages' init), and those pages stayed counted in the daemon's
// resident memory, and in its peak, for its whole life: all ~11 MiB of
// text and read-only data were resident after start-up (bench/RESULTS.md,
// issue 23, seventh pass).
//
// For a private file mapping that was never written, MADV_DONTNEED only
// removes the page table entries: the pages stay in the kernel's page
// cache with the file's contents, and the next use of one faults it back
// in from there (a minor fault, no I/O while it stays cached), as after
// exec. A mapping that was written (a debugger's breakpoint makes a
// private anonymous copy of its page) would lose that write, so such a
// mapping is left alone, and so is every writable one (.data, .bss: the
// program's variables).
func releaseText() (int64, error) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0, err
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, err
	}
	maps, err := textMappings(f, exe)
	f.Close()
	if err != nil {
		return 0, err
	}
	var released int64
	for _, m := range maps {
		// The range is the binary's mapping, not Go memory: it goes to
		// the kernel as a number.
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, uintptr(m.start), uintptr(m.end-m.start), unix.MADV_DONTNEED); errno != 0 {
			return released, fmt.Errorf("release the binary's pages: %w", errno)
		}
		released += m.rss
	}
	return released, nil
}

// textMapping is a mapping of the executable that releaseText may drop.
type textMapping struct {
	start, end uint64
	rss        int64 // KiB
}

// textMappings reads smaps (the format of /proc/PID/smaps) and returns
// the mappings of the file exe that are not writable and have no
// anonymous page.
func textMappings(smaps io.Reader, exe string) ([]textMapping, error) {
	var maps []textMapping
	var cur *textMapping
	written := false
	done := func() {
		if cur != nil && !written {
			maps = append(maps, *cur)
		}
		cur, written = nil, false
	}
	sc := bufio.NewScanner(smaps)
	for sc.Scan() {
		line := sc.Bytes()
		// A field's line ("Rss:  1234 kB") has no space before its colon;
		// a mapping's first line (start-end perms offset dev inode path)
		// has, before the colon of its device.
		if field, value, ok := bytes.Cut(line, []byte(":")); ok && !bytes.Contains(field, []byte(" ")) {
			if cur == nil {
				continue
			}
			switch string(field) {
			case "Rss":
				cur.rss = kib(value)
			case "Anonymous":
				written = written || kib(value) != 0
			}
			continue
		}
		done()
		f := strings.Fields(string(line))
		if len(f) < 6 || strings.Join(f[5:], " ") != exe || strings.ContainsRune(f[1], 'w') {
			continue
		}
		start, end, ok := strings.Cut(f[0], "-")
		s, err1 := strconv.ParseUint(start, 16, 64)
		e, err2 := strconv.ParseUint(end, 16, 64)
		if !ok || err1 != nil || err2 != nil || e <= s {
			return nil, fmt.Errorf("smaps: a mapping's line %q", line)
		}
		cur = &textMapping{start: s, end: e}
	}
	done()
	return maps, sc.Err()
}

// kib reads the number of a smaps field's value (" 1234 kB").
func kib(value []byte) int64 {
	f := bytes.Fields(value)
	if len(f) == 0 {
		return 0
	}
	n, _ := strconv.ParseInt(string(f[0]), 10, 64)
	return n
}
