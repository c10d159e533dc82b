package store

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// ReleaseMapped drops this process's mappings of the store's pages:
// madvise(MADV_DONTNEED) over bbolt's read-only shared map of the file.
//
// bbolt reads the file through that map, so every page a transaction
// looked at stays mapped, and counted in the process's resident memory,
// until the map is replaced: a busy cycle, which reads pages all over the
// store, ends with most of the file resident (docs/design.md, "Memory on a
// small box").
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
	return s.View(func(tx *Tx) error {
		size := tx.Size() // the file as of this transaction: bbolt maps at least that much
		if size <= 0 {
			return nil
		}
		data := s.db.Info().Data
		// The address comes from bbolt as a uintptr, and goes to the
		// kernel as one: no Go pointer is made of it.
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, data, uintptr(size), unix.MADV_DONTNEED); errno != 0 {
			return fmt.Errorf("questbox store %s: release mapped pages: %w", s.path, errno)
		}
		return nil
	})
}
