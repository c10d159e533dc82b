package store

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"unsafe"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
)

// ReleaseMapped drops this process's mappings of the store's pages:
// madvise(MADV_DONTNEED) over bbolt's read-only shared map of the file,
// except the pages the last ticks read (KeepMapped).
//
// bbolt reads the file through that map, so every page a transaction
// looked at stays mapped, and counted in the process's resident memory,
// until the map is replaced: a busy cycle, which reads pages all over the
// store, ends with most of the file resident (bench/RESULTS.md, issue 23).
// For a shared file mapping MADV_DONTNEED only removes the page table
// entries: the pages stay in the kernel's page cache with the file's
// contents, and the next read of one faults it back in from there (a
// minor fault, no I/O while the kernel keeps it cached). Nothing is lost
// and nothing changes for a reader; what changes is that the cached pages
// are no longer held by this process, so they are not counted in its RSS
// and the kernel may reclaim them as any unmapped cache. It frees no
// memory by itself.
//
// It runs inside a read transaction: bbolt replaces its map (when the
// file grows) only under a lock every read transaction holds, so the
// range is the live map for the whole call and never a range the map has
// left. Safe for concurrent use with every other method.
func (s *DB) ReleaseMapped() error {
	return s.View(func(tx *bolt.Tx) error {
		data, pages := s.mapped(tx)
		s.keep.mu.Lock()
		defer s.keep.mu.Unlock()
		if s.keep.base != data {
			s.keep.reset() // a new map: its pages are not the ones kept
		}
		lo := 0
		for _, r := range s.keep.ranges {
			if err := s.release(data, lo, min(r.lo, pages)); err != nil {
				return err
			}
			lo = max(lo, r.hi)
		}
		return s.release(data, lo, pages)
	})
}

// mapped is the address of bbolt's map and the number of pages of it
// that hold the file as of tx: bbolt maps at least that much.
func (s *DB) mapped(tx *bolt.Tx) (data uintptr, pages int) {
	return s.db.Info().Data, int(tx.Size() / int64(pageSize))
}

// release drops the mappings of pages [lo, hi) of the map at data.
func (s *DB) release(data uintptr, lo, hi int) error {
	if hi <= lo {
		return nil
	}
	// The address comes from bbolt as a uintptr, and goes to the
	// kernel as one: no Go pointer is made of it.
	if _, _, errno := unix.Syscall(unix.SYS_MADVISE, data+uintptr(lo*pageSize), uintptr((hi-lo)*pageSize), unix.MADV_DONTNEED); errno != 0 {
		return fmt.Errorf("questbox store %s: release mapped pages: %w", s.path, errno)
	}
	return nil
}

var pageSize = os.Getpagesize()

// keptPages is what ReleaseMapped leaves mapped: the pages of the map the
// last ticks read (KeepMapped).
//
// A daemon's tick follows a release (the store releases once a second
// while commits come, and after five quiet seconds), so every tick mapped
// again the ~2.3 MiB it reads at 1,000 active quests: ~50 page faults,
// 1–2 ms of the tick (bench/RESULTS.md, issue 23, tick10). Which pages a
// tick read the process cannot tell (bbolt reads through the map; the
// kernel's accessed bits are not readable without privileges), but which
// are mapped it can: /proc/self/pagemap. A page mapped at the end of the
// tick that was not at its start is one the tick read (or a neighbour
// the kernel mapped with it, or one a reader read meanwhile).
//
// The set only grows from tick to tick (a kept page stays mapped, so it
// never shows as read again), while what a tick reads moves: every
// commit writes the pages it changes elsewhere in the file. So once the
// set holds twice the pages a tick read from nothing, the next tick
// starts with a full release and the set is read again from what that
// tick maps: at most about twice a tick's pages are kept.
type keptPages struct {
	mu     sync.Mutex
	base   uintptr     // the map's address the ranges are pages of
	ranges []pageRange // sorted, disjoint
	n      int         // pages in ranges
	limit  int         // past this many, the next tick starts afresh
	// The writer's (one write transaction at a time): the map's address
	// when the tick began, the pages mapped then (fresh: none, the tick
	// began with a full release), and whether they are known.
	start  uintptr
	before []pageRange
	fresh  bool
	ok     bool
}

// pageRange is the pages [lo, hi) of the map.
type pageRange struct{ lo, hi int }

func (k *keptPages) reset() {
	k.ranges, k.n, k.limit = nil, 0, 0
}

// keepFloor is the least limit: a tick that read a few pages (a quiet
// box's) may keep a few more before it starts afresh.
const keepFloor = 256 // pages: 1 MiB at 4 KiB

// pagemapPath is where the process's page table is read (a test reads
// one that does not exist).
var pagemapPath = "/proc/self/pagemap"

// KeepMapped brackets a transaction whose pages the releases should leave
// mapped (the engine's tick): called at its start it notes which pages of
// the map are mapped, and the function it returns, called at the end of
// the transaction before its commit, adds the pages mapped since to the
// pages ReleaseMapped keeps. Where /proc/self/pagemap cannot be read,
// nothing is kept and the releases release everything, as before.
//
// tx must be a write transaction: only the writer replaces bbolt's map,
// so the map stays the one noted for the whole transaction.
func (s *DB) KeepMapped(tx *bolt.Tx) (done func()) {
	data, pages := s.mapped(tx)
	k := &s.keep
	k.mu.Lock()
	if k.base != data || k.n > k.limit {
		k.reset()
	}
	k.fresh = k.n == 0
	k.mu.Unlock()
	k.start = data
	var err error
	if k.fresh {
		// Read from nothing: the tick starts with nothing mapped, as
		// every tick of a daemon did before there was a set.
		k.before = k.before[:0]
		err = s.release(data, 0, pages)
	} else {
		k.before, err = presentPages(k.before[:0], data, pages)
	}
	k.ok = err == nil
	return func() { s.keepRead(tx) }
}

// keepRead adds the pages of the map mapped since KeepMapped to the set.
func (s *DB) keepRead(tx *bolt.Tx) {
	k := &s.keep
	data, pages := s.mapped(tx)
	var now []pageRange
	err := errNotNoted
	if k.ok && data == k.start {
		now, err = presentPages(nil, data, pages)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if err != nil {
		k.reset() // nothing kept: released in full, as before
		k.base = 0
		return
	}
	k.base = data
	k.ranges = union(k.ranges, subtract(now, k.before))
	k.n = 0
	for _, r := range k.ranges {
		k.n += r.hi - r.lo
	}
	if k.fresh {
		k.limit = max(2*k.n, keepFloor)
	}
}

// errNotNoted: what was mapped when the tick began is not known (or was
// of another map).
var errNotNoted = errors.New("questbox store: the mapped pages before the transaction are not known")

// ForgetMapped empties the set KeepMapped keeps and releases the pages it
// held: a box gone idle keeps none of its last busy tick's pages.
func (s *DB) ForgetMapped() error {
	s.keep.mu.Lock()
	had := s.keep.n > 0
	s.keep.reset()
	s.keep.mu.Unlock()
	if !had {
		return nil
	}
	return s.ReleaseMapped()
}

// union is the union of the sorted disjoint ranges a and b.
func union(a, b []pageRange) []pageRange {
	out := make([]pageRange, 0, len(a)+len(b))
	for len(a) > 0 || len(b) > 0 {
		var r pageRange
		if len(b) == 0 || len(a) > 0 && a[0].lo <= b[0].lo {
			r, a = a[0], a[1:]
		} else {
			r, b = b[0], b[1:]
		}
		if n := len(out); n > 0 && r.lo <= out[n-1].hi {
			out[n-1].hi = max(out[n-1].hi, r.hi)
			continue
		}
		out = append(out, r)
	}
	return out
}

// subtract is the pages of a not in b (both sorted and disjoint).
func subtract(a, b []pageRange) []pageRange {
	var out []pageRange
	for _, r := range a {
		for len(b) > 0 && b[0].hi <= r.lo {
			b = b[1:]
		}
		lo := r.lo
		for _, x := range b {
			if x.lo >= r.hi {
				break
			}
			if x.lo > lo {
				out = append(out, pageRange{lo, x.lo})
			}
			lo = max(lo, x.hi)
		}
		if lo < r.hi {
			out = append(out, pageRange{lo, r.hi})
		}
	}
	return out
}

// presentPages appends to into the ranges of the first pages pages of the
// map at data that are mapped into this process. It asks the kernel for
// them with PAGEMAP_SCAN (Linux 6.7: the ranges, walked in the kernel),
// and else reads /proc/self/pagemap (8 bytes a page, bit 63 set when the
// page is present), which costs several times more.
func presentPages(into []pageRange, data uintptr, pages int) ([]pageRange, error) {
	f, err := os.Open(pagemapPath)
	if err != nil {
		return into, err
	}
	defer f.Close()
	if out, err := scanPresent(into, f, data, pages); err == nil {
		return out, nil
	}
	return readPresent(into, f, data, pages)
}

// scanPresent is presentPages by PAGEMAP_SCAN (linux/fs.h).
func scanPresent(into []pageRange, f *os.File, data uintptr, pages int) ([]pageRange, error) {
	const (
		pagemapScan   = 0xC0606610 // _IOWR('f', 16, struct pm_scan_arg)
		pageIsPresent = 1 << 3
	)
	type pmScanArg struct {
		size, flags, start, end, walkEnd, vec, vecLen, maxPages       uint64
		categoryInverted, categoryMask, categoryAnyofMask, returnMask uint64
	}
	type pageRegion struct{ start, end, categories uint64 }
	var regions [128]pageRegion
	first, end := uint64(data), uint64(data)+uint64(pages)*uint64(pageSize)
	n0 := len(into)
	for start := first; start < end; {
		arg := pmScanArg{
			size: uint64(unsafe.Sizeof(pmScanArg{})), start: start, end: end,
			vec: uint64(uintptr(unsafe.Pointer(&regions[0]))), vecLen: uint64(len(regions)),
			categoryMask: pageIsPresent, returnMask: pageIsPresent,
		}
		n, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), pagemapScan, uintptr(unsafe.Pointer(&arg)))
		if errno != 0 {
			return into[:n0], errno
		}
		for _, r := range regions[:n] {
			into = appendRange(into, pageRange{int((r.start - first) / uint64(pageSize)), int((r.end - first) / uint64(pageSize))})
		}
		if arg.walkEnd <= start {
			return into[:n0], fmt.Errorf("questbox store: PAGEMAP_SCAN: no progress at %#x", start)
		}
		start = arg.walkEnd
	}
	return into, nil
}

// readPresent is presentPages by reading /proc/self/pagemap.
func readPresent(into []pageRange, f *os.File, data uintptr, pages int) ([]pageRange, error) {
	const chunk = 4096 // entries a read: 32 KiB
	buf := make([]uint64, min(chunk, pages))
	raw := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(buf))), len(buf)*8)
	first := int64(data) / int64(pageSize)
	n0 := len(into)
	for p := 0; p < pages; {
		n := min(chunk, pages-p)
		got, err := f.ReadAt(raw[:n*8], (first+int64(p))*8)
		if got < n*8 {
			if err == nil {
				err = fmt.Errorf("questbox store: %s: short read", pagemapPath)
			}
			return into[:n0], err
		}
		for i, e := range buf[:n] {
			if e&(1<<63) != 0 {
				into = appendRange(into, pageRange{p + i, p + i + 1})
			}
		}
		p += n
	}
	return into, nil
}

// appendRange appends r to the sorted ranges rs, joined to the last one
// when they touch.
func appendRange(rs []pageRange, r pageRange) []pageRange {
	if n := len(rs); n > 0 && rs[n-1].hi == r.lo {
		rs[n-1].hi = r.hi
		return rs
	}
	return append(rs, r)
}
