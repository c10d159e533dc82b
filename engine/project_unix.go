//go:build unix

package engine

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// checkAccess asks the kernel whether this process may read, write and
// enter dir (faccessat with the effective ids), so that the answer takes
// its user, groups, ACLs and a read-only mount (a systemd sandbox) into
// account.
func checkAccess(dir string) string {
	err := unix.Faccessat(unix.AT_FDCWD, dir, unix.R_OK|unix.W_OK|unix.X_OK, unix.AT_EACCESS)
	switch {
	case err == nil:
		return ""
	case errors.Is(err, unix.EROFS):
		return fmt.Sprintf("project %q is read-only to the daemon (a read-only mount or its systemd sandbox: allow it with ReadWritePaths=, see the README)", dir)
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		return fmt.Sprintf("project %q cannot be read, written and entered by the daemon's user (uid %d): permission denied", dir, os.Geteuid())
	}
	return fmt.Sprintf("project %q: %v", dir, err)
}
