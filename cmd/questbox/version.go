package main

import (
	"context"
	"flag"
	"fmt"
	"runtime"

	"github.com/questbox/questbox/internal/release"
	"github.com/questbox/questbox/internal/update"
)

// version is set at build time: go build -ldflags "-X main.version=v1.2.3".
var version = "dev"

// versionCmd is `version`.
type versionCmd struct{}

func (c *versionCmd) flags(*flag.FlagSet) {}

func (c *versionCmd) run(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("version", args); err != nil {
		return err
	}
	// What the data directory keeps (internal/daemon's update.go): best effort, a box
	// without one has only this binary.
	var st update.State
	if u, err := e.daemonEnv().UpdateDir(); err == nil {
		st, _ = u.State()
	}
	if e.json {
		v := map[string]string{"version": version, "go": runtime.Version(), "os": runtime.GOOS, "arch": runtime.GOARCH,
			"target": release.Host().String(), "packaged": e.daemonEnv().PackagedVersion(), "committed": st.Current.Version}
		if st.Previous != nil {
			v["rollback"] = st.Previous.Version
		}
		if st.Trial != nil {
			v["trial"] = st.Trial.Version
		}
		if st.Last != "" {
			v["last_update"] = st.Last
		}
		return printJSON(e.stdout, v)
	}
	fmt.Fprintf(e.stdout, "questbox %s (%s %s)\n", version, runtime.Version(), release.Host())
	if st.Current.Version != "" && st.Current.Version != version {
		fmt.Fprintf(e.stdout, "the box runs: %s\n", st.Current)
	}
	if st.Trial != nil {
		fmt.Fprintf(e.stdout, "on trial: %s (started %d times)\n", st.Trial.Version, st.Trial.Starts)
	}
	if st.Previous != nil {
		fmt.Fprintf(e.stdout, "kept for rollback: %s\n", st.Previous)
	}
	if st.Last != "" {
		fmt.Fprintf(e.stdout, "last update: %s\n", st.Last)
	}
	return nil
}
