// Command questbox-confine is the launcher of questbox's confined runs.
// Nobody runs it by hand: the questbox daemon starts it for every command
// agent, command judge and program rule, with a hidden argument and the
// run's specification in its environment; it confines itself (namespaces,
// Landlock, seccomp: internal/confine, docs/privacy.md) and then becomes
// the agent's program in its place.
//
// It is installed beside questbox and holds nothing but the launcher, so
// that it starts in a fraction of the time and memory of the questbox
// binary, which launches the runs itself when this one is missing or of
// another build.
package main

import (
	"fmt"
	"os"

	"github.com/questbox/questbox/internal/confine"
)

func main() {
	confine.Main()
	fmt.Fprintf(os.Stderr, "%s: questbox starts this launcher of its confined runs; it is not run by hand\n", confine.LauncherName)
	os.Exit(2)
}
