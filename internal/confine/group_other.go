//go:build !unix

package confine

import (
	"io/fs"
	"os/exec"
)

// processGroup does nothing where there are no process groups.
func processGroup(*exec.Cmd) {}

// owner is unknown where files have no uid.
func owner(fs.FileInfo) (int, bool) { return 0, false }

// killGroup does nothing where there are no process groups.
func killGroup(*exec.Cmd) {}

// cancelGroup does nothing where there are no process groups.
func cancelGroup(*exec.Cmd) {}
