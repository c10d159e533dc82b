//go:build unix && !linux

package confine

import (
	"os/exec"
	"syscall"
)

// processGroup puts cmd in a process group of its own.
func processGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }
