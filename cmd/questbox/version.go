package main

import (
	"context"
	"flag"
	"fmt"
	"runtime"
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
	if e.json {
		return printJSON(e.stdout, map[string]string{"version": version, "go": runtime.Version(), "os": runtime.GOOS, "arch": runtime.GOARCH})
	}
	fmt.Fprintf(e.stdout, "questbox %s (%s %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}
