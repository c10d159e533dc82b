package store

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// Compaction. bbolt never gives a page back to the file system, and it
// writes its whole list of free pages at every commit: after the outbox is
// pruned of a burst of events (a broker away for days, a first start over a
// seeded store), thousands of free pages make every later commit write and
// sort that list again — more SD-card wear and a tick that grows with the
// store. A daemon's open therefore rewrites the file without them when they
// are many: at least CompactMinFree pages and a quarter of the file.
const (
	CompactMinFree = 2048 // 8 MiB of 4 KiB pages
	// compactTxBytes bounds the keys and values one transaction of the
	// copy holds, so a large store is copied in a few MiB of memory.
	compactTxBytes = 8 << 20
	// compactHeadroom is the free disk a compaction leaves besides its copy.
	compactHeadroom = 64 << 20
)

// CompactTempPrefix names the copy under way; an open removes one a crash
// left behind.
const CompactTempPrefix = FileName + ".compact-"

// ShouldCompact reports whether the open store is worth a rewrite, and how
// many of its pages are free: when at least CompactMinFree pages and a
// quarter of the file are free, or when this open upgraded a store of at
// least CompactMinFree pages. An upgrade rewrites records all over the
// file and leaves few free pages but many part-empty ones, which bbolt
// never merges back while they are over a quarter full: the 8 -> 9 upgrade,
// in parts, left a 100k-node store at 373 MiB that a copy packs into 290, and
// the start that
// upgrades is already a long one, once.
func (s *DB) ShouldCompact() (free, total int, ok bool) {
	st := s.db.Stats()
	free = st.FreePageN + st.PendingPageN
	total = int(s.size.Load() / int64(s.db.Info().PageSize))
	return free, total, (free >= CompactMinFree && free*4 >= total) || (s.upgraded() && total >= CompactMinFree)
}

// upgraded reports whether this open migrated the store to a newer schema.
func (s *DB) upgraded() bool { return s.migratedFrom < s.schema }

// compactTo copies the store into a new file next to it and returns its
// path. The copy is written without a sync per transaction (it is nobody's
// store yet), then synced once and checked page by page before anything
// replaces the store. On error nothing but the copy was written, and it is
// removed.
func (s *DB) compactTo() (tmp string, err error) {
	f, err := os.CreateTemp(s.dir, CompactTempPrefix+"*")
	if err != nil {
		return "", err
	}
	tmp = f.Name()
	f.Close()
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	dst, err := bolt.Open(tmp, 0o600, &bolt.Options{NoSync: true, FreelistType: freelistType})
	if err != nil {
		return "", err
	}
	if err := bolt.Compact(dst, s.db, compactTxBytes); err != nil {
		dst.Close()
		return "", err
	}
	if err := dst.Sync(); err != nil {
		dst.Close()
		return "", err
	}
	if err := dst.Close(); err != nil {
		return "", err
	}
	// The copy must be a sound store before it replaces one.
	c, err := os.Open(tmp)
	if err != nil {
		return "", err
	}
	_, err = inspect(s.dir, tmp, c, true)
	c.Close()
	if err != nil {
		return "", fmt.Errorf("the compacted copy does not check: %w", err)
	}
	return tmp, nil
}

// compact rewrites the store at path without its free pages when
// shouldCompact says so, and returns the store to use: s itself (nothing to
// do, or the copy failed — a full disk must not keep the daemon from
// starting; the reason is in its notes), or s closed and the compacted file
// opened in its place. The rename is the commit point: a crash before it
// leaves the old file and a stray copy (removed at the next open), after it
// the new file.
func (s *DB) compact(open func() (*DB, error)) (*DB, error) {
	free, total, ok := s.ShouldCompact()
	if !ok {
		return s, nil
	}
	// The copy holds the pages in use; leave room besides it, so that a
	// compaction never fills the card under the logs and the daemon.
	live := int64(total-free) * int64(s.db.Info().PageSize)
	if avail, known := diskFree(s.dir); known && avail < live+compactHeadroom {
		s.notes = append(s.notes, fmt.Sprintf("%d of the store's %d pages are free; it was not compacted: the copy needs %s and %s more of free disk, and %s is free",
			free, total, mib(live), mib(compactHeadroom), mib(avail)))
		return s, nil
	}
	tmp, err := s.compactTo()
	if err == nil {
		if err = os.Rename(tmp, s.path); err != nil {
			os.Remove(tmp)
		}
	}
	if err != nil {
		s.notes = append(s.notes, fmt.Sprintf("%d of the store's %d pages are free; it was not compacted: %v", free, total, err))
		return s, nil
	}
	// The store is the new file from here on: a process waiting for the old
	// file's lock finds the path changed and opens again (openLocked).
	derr := syncDir(s.dir)
	before := s.size.Load()
	if err := s.Close(); err != nil {
		return nil, fmt.Errorf("questbox store %s: close after compaction: %w: %w", s.path, ErrStoreFailed, err)
	}
	ns, err := open()
	if err != nil {
		return nil, err
	}
	// What the first open found and did (a repaired meta page, an
	// upgrade) stays said.
	ns.notes = append(slices.Clone(s.notes), ns.notes...)
	if derr != nil {
		ns.notes = append(ns.notes, fmt.Sprintf("the store's directory could not be synced after compaction: %v", derr))
	}
	why := ""
	if s.upgraded() {
		why = " after the upgrade"
	}
	ns.notes = append(ns.notes, fmt.Sprintf("compacted%s: %d of %d pages were free; %s → %s",
		why, free, total, mib(before), mib(ns.size.Load())))
	// The copy's transactions held up to compactTxBytes of records and
	// their nodes on the heap: give it back now rather than over the
	// scavenger's minutes, on a box with 512 MB.
	debug.FreeOSMemory()
	return ns, nil
}

// removeStaleCompactions removes copies a crash left mid-compaction.
func removeStaleCompactions(dir string) {
	stale, _ := filepath.Glob(filepath.Join(dir, CompactTempPrefix+"*"))
	for _, p := range stale {
		os.Remove(p)
	}
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
