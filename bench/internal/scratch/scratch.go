// Package scratch is the working directory of one harness run under
// bench/: a temporary directory, kept on request, and the daemon under
// test built into it as a device runs it (static and stripped).
package scratch

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Dir makes a temporary directory named after prefix. done removes it,
// unless keep is set: then the path is printed on stderr and left for a
// look after the run.
func Dir(prefix string, keep bool) (dir string, done func(), err error) {
	dir, err = os.MkdirTemp("", prefix)
	if err != nil {
		return "", nil, err
	}
	if keep {
		fmt.Fprintln(os.Stderr, "keeping", dir)
		return dir, func() {}, nil
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}

// Daemon builds ./cmd/questbox of the current directory (the repository's
// root) into dir, static and stripped as a release is, and returns its
// path. The compiler's output goes to stderr.
func Daemon(dir string) (string, error) {
	bin := filepath.Join(dir, "questbox")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "./cmd/questbox")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("build: %w", err)
	}
	return bin, nil
}
