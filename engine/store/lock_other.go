//go:build !unix

package store

import (
	"os"
	"time"
)

// lockFile leaves locking to bbolt where flock does not exist.
func lockFile(f *os.File, exclusive bool, timeout time.Duration) error { return nil }

// HeldExclusive cannot tell here: nothing is held.
func HeldExclusive(path string) bool { return false }

// diskFree cannot tell here.
func diskFree(dir string) (int64, bool) { return 0, false }
