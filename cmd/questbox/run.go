package main

import (
	"context"
	"flag"

	"github.com/questbox/questbox/internal/daemon"
)

// runCmd is `run`: the daemon (internal/daemon).
type runCmd struct{ f daemon.Flags }

func (c *runCmd) flags(fs *flag.FlagSet) {
	fs.DurationVar(&c.f.Tick, "tick", 0, "tick period (default: the config's daemon.tick; 5s with --demo)")
	fs.StringVar(&c.f.GPIO, "gpio", "", "GPIO backend: auto, sim or periph (default: the config's gpio.backend)")
	fs.StringVar(&c.f.Listen, "listen", "", "dashboard address host:port (default: the config's daemon.listen)")
	fs.BoolVar(&c.f.Demo, "demo", false, "demo mode: the demo provider, a 5s tick, and a demo quest on first start")
	fs.BoolVar(&c.f.CheckConfig, "check-config", false, "validate the configuration and the providers, then exit")
	fs.StringVar(&c.f.LogLevel, "log-level", "", "the log's level: debug, info, warn or error (default: warn when stderr is a terminal, so the event lines stay readable; info otherwise, and under systemd)")
	fs.DurationVar(&c.f.Settle, "update-settle", daemon.DefaultSettle, "how long a release on trial (questbox update) must be ready and feed the watchdog before it is kept")
}

func (c *runCmd) run(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("run", args); err != nil {
		return err
	}
	return daemon.Run(ctx, e.daemonEnv(), &c.f)
}

// daemonEnv is e as internal/daemon takes it: the I/O, the resolved
// configuration and the way to load it again.
func (e *env) daemonEnv() *daemon.Env {
	return &daemon.Env{Stdout: e.stdout, Stderr: e.stderr, Getenv: e.getenv, Cfg: e.cfg, Data: e.data, DataFrom: e.dataFrom,
		Log: e.log, Redact: e.redact, Version: version, FormatEvent: formatEvent, LoadConfig: e.loadConfig}
}
