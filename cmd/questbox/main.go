// Command questbox is the questbox daemon (`questbox run`) and every CLI verb
// of SPEC §8. All wiring — store, engine, providers, control socket, systemd —
// lives in this package; see run for the entry point.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(report(os.Stderr, err))
}
