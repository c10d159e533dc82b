package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// CheckProject says why path cannot be a quest's project directory, or ""
// when it can: it must be an absolute path to a directory that this
// process (the daemon's user, inside its sandbox) can read, write and
// enter. The CLI, the API and the dashboard all refuse a quest with this
// sentence (NewQuest lists it among the spec's problems).
func CheckProject(path string) string {
	if !filepath.IsAbs(path) {
		return fmt.Sprintf("project %q is not an absolute path", path)
	}
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("project %q does not exist", path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Sprintf("project %q cannot be reached by the daemon's user (uid %d): permission denied", path, os.Geteuid())
	case err != nil:
		return fmt.Sprintf("project %q: %v", path, errors.Unwrap(err))
	case !info.IsDir():
		return fmt.Sprintf("project %q is not a directory", path)
	}
	return checkAccess(path)
}
