package daemon

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

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
// text and read-only data were resident after start-up.
//
// For a private file mapping that was never written, MADV_DONTNEED only
// removes the page table entries: the pages stay in the kernel's page
// cache with the file's contents, and the next use of one faults it back
// in from there (a minor fault, no I/O while it stays cached), as after
// exec. A mapping that was written (a debugger's breakpoint makes a
// private anonymous copy of its page) would lose that write, so such a
// mapping is left alone, and so is every writable one (.data, .bss: the
// program's variables).
//
// Dropping the page table entries alone gave back only the start-up's
// pages: a busy cycle faulted ~10 MiB of the binary back in for ~5 MiB it
// read, because a fault on a page the page cache holds maps its cached
// neighbours too — up to 64 KiB around it (the kernel's fault-around),
// the whole folio where the file system caches large folios — and
// madvise(MADV_RANDOM) does not stop that. Fault-around maps only what
// is cached, so the mappings are then advised MADV_RANDOM, which turns
// off the read-ahead of a fault that must read the file, and the binary's
// cached pages in their ranges are dropped
// (posix_fadvise(POSIX_FADV_DONTNEED): clean pages of a file, read again
// from it when needed; pages another process maps stay, and so does a
// large folio one of whose pages is mapped). From
// then on a dropped page the daemon uses is read alone and mapped alone:
// what the binary holds resident is what the daemon used since, at the
// cost of one read of the file per page the first time it is used
// again. That holds for the tables; for the code only before Linux 6.16,
// whose faults in an executable mapping read ahead whatever the advice
// (unmapTextWhileBusy).
func releaseText() (int64, error) {
	maps, err := selfTextMappings()
	if err != nil {
		return 0, err
	}
	bin, err := os.Open("/proc/self/exe") // the file it runs, even if an update replaced its path since
	if err != nil {
		return 0, err
	}
	defer bin.Close()
	var released int64
	for _, m := range maps {
		released += m.rss
	}
	// Between a mapping's release and its pages' drop from the cache, the
	// daemon's threads fault back what they run, with its cached neighbours,
	// and the cache keeps a page that is mapped: a second round drops those,
	// when little is cached around them any more.
	for range 2 {
		for _, m := range maps {
			if err := m.release(bin); err != nil {
				return released, err
			}
		}
	}
	return released, nil
}

// release drops m's pages from the daemon's page tables and, where no
// other process maps them, from the page cache of the file bin, and
// advises m MADV_RANDOM (see releaseText).
func (m textMapping) release(bin *os.File) error {
	for _, advice := range []int{unix.MADV_DONTNEED, unix.MADV_RANDOM} {
		if err := m.advise(advice); err != nil {
			return fmt.Errorf("release the binary's pages: %w", err)
		}
	}
	if err := unix.Fadvise(int(bin.Fd()), int64(m.offset), int64(m.end-m.start), unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("drop the binary's cached pages: %w", err)
	}
	return nil
}

// advise gives the kernel advice on m's range (madvise). The range is the
// binary's mapping, not Go memory: it goes to the kernel as a number.
func (m textMapping) advise(advice int) error {
	if _, _, errno := unix.Syscall(unix.SYS_MADVISE, uintptr(m.start), uintptr(m.end-m.start), uintptr(advice)); errno != 0 {
		return errno
	}
	return nil
}

// textUnmapEvery is how often, while commits come, the daemon takes the
// binary's pages out of its page tables again (unmapTextWhileBusy).
const textUnmapEvery = time.Second

// unmapTextWhileBusy runs until ctx ends: every textUnmapEvery in which
// the store committed (commits, the live store's count, moved), it takes
// the binary's read-only pages out of the daemon's page tables again
// (unmapTextIfCommitted).
//
// releaseText's drop from the page cache does not hold for the code on
// Linux 6.16 and later: there a fault in an executable mapping ignores
// MADV_RANDOM and reads ahead up to the device's read_ahead_kb (128 KiB
// on an SD card, 8 MiB on the VM the benchmarks ran on) to the end of the
// mapping, so the first page the daemon runs after the release caches
// the code again, and each fault then maps the cached pages around it,
// up to 64 KiB (fault-around). The code resident at a busy cycle's peak
// was every 64 KiB window the daemon ran since it was ready: 4.2 MiB of
// its 5.8 MiB on the benchmarks' VM. Unmapped again
// each second while commits come, it is the windows the last second ran.
// The pages stay cached: mapping them back is a minor fault, with no
// read of the file, one a window. A quiet daemon commits nothing and
// keeps what it maps.
func unmapTextWhileBusy(ctx context.Context, commits func() uint64) {
	maps, err := selfTextMappings()
	if err != nil {
		return // resident memory only: releaseText reports the same failure
	}
	t := time.NewTicker(textUnmapEvery)
	defer t.Stop()
	last := commits()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		last = unmapTextIfCommitted(maps, commits, last)
	}
}

// unmapTextIfCommitted takes maps out of the daemon's page tables
// (MADV_DONTNEED: for a private file mapping never written, the pages
// stay in the page cache) if commits moved from last, and returns its
// count now. A failure costs resident memory only: nobody's error.
func unmapTextIfCommitted(maps []textMapping, commits func() uint64, last uint64) uint64 {
	now := commits()
	if now != last {
		for _, m := range maps {
			_ = m.advise(unix.MADV_DONTNEED)
		}
	}
	return now
}

// selfTextMappings is textMappings of this process and its executable.
func selfTextMappings() ([]textMapping, error) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return nil, err
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return textMappings(f, exe)
}

// textMapping is a mapping of the executable that releaseText may drop.
type textMapping struct {
	start, end uint64
	offset     uint64 // in the file
	rss        int64  // KiB
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
		off, err3 := strconv.ParseUint(f[2], 16, 64)
		if !ok || err1 != nil || err2 != nil || err3 != nil || e <= s {
			return nil, fmt.Errorf("smaps: a mapping's line %q", line)
		}
		cur = &textMapping{start: s, end: e, offset: off}
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
