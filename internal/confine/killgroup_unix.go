//go:build unix

package confine

import (
	"os/exec"
	"syscall"
)

// killGroup kills what is left of a waited-for command's process group:
// the launcher leads a session and group of its own, and where no PID
// namespace ends a run's processes with it, its children stay in that
// group (seccomp keeps them from leaving). While any member lives the
// leader's pid stays reserved as the group's id, so this reaches no
// stranger; an empty group is ESRCH.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil && cmd.Process.Pid > 0 {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// cancelGroup makes a command started with a context kill its whole
// group when the context ends, not its leader alone.
func cancelGroup(cmd *exec.Cmd) {
	if cmd.Cancel == nil {
		return
	}
	cmd.Cancel = func() error {
		if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != syscall.ESRCH {
			return err
		}
		return cmd.Process.Kill()
	}
}
