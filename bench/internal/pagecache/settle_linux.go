// Package pagecache is what the harnesses under bench/ do to a store file
// before a daemon opens it: bring it to the state a device's store is in
// at boot.
package pagecache

import (
	"os"

	"golang.org/x/sys/unix"
)

// Settle makes the copied store at path what a device's store is when its
// daemon starts: on the disk, and not in the page cache the copy left it
// in. cp writes in large chunks, and this kernel (6.18, ext4) caches what
// it writes in large folios; each 4 KiB page bbolt later writes into such
// a folio dirties, and writes back, the whole folio (measured: 100 pwrites
// of 4 KiB into a file written in 1 MiB chunks dirtied 8.4 MB; into one
// read back through a map, 0.4 MB). Without settle, ~9 of a busy tick's
// ~23 MiB of write_bytes and ~2 MiB of its peak RSS were that, not the
// daemon's. Only
// clean pages leave the cache: the copy is synced first. bench/scale and
// bench/upgrade settle each copy before its daemon starts.
func Settle(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return err
	}
	return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}
