package confine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
)

// LauncherName is the file name of the small launcher
// (cmd/questbox-confine), which the daemon looks for beside its own
// executable. It does what the daemon's binary does as the launcher, and
// starts in a fraction of its time and memory: it holds nothing else.
const LauncherName = "questbox-confine"

// Protocol is the version of what the daemon and its launcher say to each
// other: the verbs, the specification of a run, and what the launcher does
// with it (the layers and how each is applied). Change it with any of
// them. The daemon uses a launcher only if it answers with this protocol
// and this build (build), and the launcher refuses a run of a daemon of
// another: a launcher that read a specification another way, or applied a
// layer another way, would confine a run otherwise than the probe found.
const Protocol = 1

// build is what a launcher and its daemon must agree on: the protocol,
// the Go version, and the main module's version and commit where the go
// command recorded them. Two binaries built from one tree agree.
func build() string {
	var b strings.Builder
	fmt.Fprintf(&b, "questbox-confine protocol %d, %s", Protocol, runtime.Version())
	if bi, ok := debug.ReadBuildInfo(); ok {
		fmt.Fprintf(&b, ", %s %s", bi.Main.Path, bi.Main.Version)
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" || s.Key == "vcs.modified" {
				fmt.Fprintf(&b, " %s=%s", s.Key, s.Value)
			}
		}
	}
	return b.String()
}

// errMissing is checkLauncher's error for a launcher that is not there.
var errMissing = errors.New("it is missing")

// checkLauncher starts exe once with the build verb and says why it may
// not be the launcher: it is missing, does not start, or answers with
// another build than want.
func checkLauncher(ctx context.Context, exe, want string) error {
	if _, err := os.Stat(exe); errors.Is(err, fs.ErrNotExist) {
		return errMissing
	}
	cmd := exec.CommandContext(ctx, exe, buildVerb)
	cmd.Env = []string{}
	cmd.Dir = "/"
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			err = fmt.Errorf("%w: %s", err, clip(msg))
		}
		return fmt.Errorf("it does not answer: %w", err)
	}
	if got := strings.TrimSpace(out.String()); got != want {
		return fmt.Errorf("it is of another build: it says %q, the daemon is %q", clip(got), want)
	}
	return nil
}

// clip is s cut to a length fit for a log line: what a program that is
// not a launcher printed may be long.
func clip(s string) string {
	const limit = 200
	if len(s) <= limit {
		return s
	}
	return s[:limit] + "…"
}

// chooseLauncher keeps l.exe (Config.Exe, or the small launcher beside
// this program) if it answers with this build, and otherwise makes this
// program the launcher, with l.fallback saying why. It starts one process,
// once, at the probe: runs then start the launcher it chose without
// asking again (each run's specification still names the build, which the
// launcher checks).
func (l *Launcher) chooseLauncher(ctx context.Context) {
	if l.exe == l.self {
		return
	}
	if err := checkLauncher(ctx, l.exe, l.build); err != nil {
		l.fallback = fmt.Sprintf("not %s: %v", l.exe, err)
		l.exe = l.self
	}
}
