//go:build unix

package store

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// lockRetry is how often a wait for another process's lock tries again.
const lockRetry = 50 * time.Millisecond

// lockFile takes bbolt's advisory lock on f: exclusive for a writer,
// shared for readers. It gives up with errLockTimeout after timeout. bbolt
// takes the same flock on the same open file again, which succeeds at once.
func lockFile(f *os.File, exclusive bool, timeout time.Duration) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return err
		}
		if time.Now().After(deadline) {
			return errLockTimeout
		}
		if lockWaitHook != nil {
			lockWaitHook()
		}
		time.Sleep(lockRetry)
	}
}

// HeldExclusive reports whether another process holds the exclusive
// lock of the store file at path now (a daemon, or a command writing to
// it), without waiting. A missing file is not held.
func HeldExclusive(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	// flock locks belong to the open file: closing this one releases only
	// the shared lock taken here, never one this process holds elsewhere.
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	return errors.Is(err, syscall.EWOULDBLOCK)
}

// diskFree is the bytes an unprivileged writer may still use on dir's
// file system, and false if it cannot tell.
func diskFree(dir string) (int64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true
}
