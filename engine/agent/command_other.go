//go:build !unix

package agent

import (
	"os"
	"os/exec"
)

// setProcessGroup does nothing where process groups do not exist; only the
// command itself is killed on timeout there.
func setProcessGroup(cmd *exec.Cmd) {}

// killProcessGroup kills p alone.
func killProcessGroup(p *os.Process) error {
	if p == nil {
		return nil
	}
	return p.Kill()
}
