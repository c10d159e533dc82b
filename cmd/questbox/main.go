// Command questbox is the questbox daemon (`questbox run`) and every CLI
// verb. It parses the command line, calls ui/api's client (the daemon's
// control socket, or the same handlers in-process) or internal/daemon,
// which holds all the wiring (store, engine, providers, control socket,
// systemd), and prints; see run for the entry point.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/questbox/questbox/internal/confine"
)

func main() {
	// Started as the launcher of a confined agent, this process confines
	// itself and becomes the agent: nothing else of questbox runs.
	confine.Main()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(report(os.Stderr, err))
}
