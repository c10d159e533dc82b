package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"slices"

	"github.com/questbox/questbox/device"
	"github.com/questbox/questbox/internal/config"
	"github.com/questbox/questbox/internal/daemon"
)

// selftestCmd is `selftest`: it says which confinement agents get on this
// machine, then checks the wiring of the LEDs and the button with a
// person watching (device.Selftest). It opens the pins itself, so it
// refuses to run while a daemon holds them, and it never falls back to the
// simulator: a selftest of simulated pins would prove nothing.
type selftestCmd struct {
	gpio string
}

func (c *selftestCmd) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.gpio, "gpio", "", "GPIO backend: auto or periph (default: the config's gpio.backend; both mean real pins here)")
}

func (c *selftestCmd) run(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("selftest", args); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, daemon.ConfinementLine(ctx, e.cfg))
	g := e.cfg.GPIO
	if c.gpio != "" {
		if !slices.Contains([]string{config.BackendAuto, config.BackendSim, config.BackendPeriph}, c.gpio) {
			return usagef("selftest: --gpio %q is not one of auto, sim, periph", c.gpio)
		}
		g.Backend = c.gpio
	}
	if g.Backend == config.BackendSim {
		return usagef("selftest checks real wiring, and the sim backend has none (use --gpio periph)")
	}
	g.Backend = config.BackendPeriph
	sock := e.cfg.SocketPath()
	if daemonRunning(ctx, sock) {
		return &exitError{Code: exitStore, Err: fmt.Errorf("a questbox daemon is running (control socket %s) and holds the GPIO pins: stop it first (`sudo systemctl stop questbox`), then run selftest again", sock)}
	}
	dev, err := daemon.OpenDevice(g, slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		return err
	}
	defer dev.Close()
	fmt.Fprintln(e.stdout, "selftest: watch the LEDs, then press the button when asked")
	err = device.Selftest(ctx, dev, e.stdout)
	switch {
	case err == nil:
		fmt.Fprintln(e.stdout, selftestPassed(dev.HasButton()))
		return nil
	case errors.Is(err, device.ErrNoPress):
		return usagef("selftest: no button press seen within %s: check the button's wiring (default BCM 23, physical pin 16, to ground)", device.SelftestPressWait)
	}
	return fmt.Errorf("selftest: %w", err)
}

// selftestPassed is selftest's closing line: it claims a button press only
// where a button is fitted.
func selftestPassed(button bool) string {
	if !button {
		return "selftest passed: every fitted LED was lit in turn; no button is fitted (gpio.button = -1), so none was checked"
	}
	return "selftest passed: every fitted LED was lit in turn and the button was seen"
}
