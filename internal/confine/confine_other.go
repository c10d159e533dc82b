//go:build !linux

package confine

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
)

// Main refuses the launcher's verbs: confinement needs Linux.
func Main() {
	if len(os.Args) < 2 || (os.Args[1] != runVerb && os.Args[1] != probeVerb && os.Args[1] != buildVerb) {
		return
	}
	fmt.Fprintf(os.Stderr, "questbox confine: agents cannot be confined on %s\n", runtime.GOOS)
	os.Exit(126)
}

// probe reports that nothing applies: only Linux has the layers.
func (l *Launcher) probe(context.Context) Report {
	var r Report
	for _, ly := range layers {
		r.set(ly, false, "needs Linux, this is %s", runtime.GOOS)
	}
	l.skip = slices.Clone(layers)
	return r
}

// rewrite leaves cmd's program as it is, unconfined, with the
// environment and working directory of sp, in a process group of its own
// where there are process groups.
func (l *Launcher) rewrite(cmd *exec.Cmd, sp *spec) error {
	cmd.Env = sp.Env
	cmd.Dir = sp.Dir
	processGroup(cmd)
	return nil
}
