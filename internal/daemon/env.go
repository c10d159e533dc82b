// Package daemon is questbox's daemon assembled outside package main: from
// the configuration to the running services (the engine over its store,
// the providers and the L2 judge, the confinement launcher, the LEDs and
// the button, the control socket, the dashboard, MQTT, /metrics, the
// journal, SIGHUP's reload and the usage meter that outlives it), the
// store it holds and waits for (a refused store, a restore), and the
// operations on a store without a daemon (Local, Salvage, WriteBackup).
// cmd/questbox parses the command line, calls Run or the API, and prints;
// it imports no engine package.
package daemon

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/questbox/questbox/internal/config"
	"github.com/questbox/questbox/ui/api"
)

// Env is what the daemon and the offline store operations run against:
// the invoking process's output and environment, and the configuration
// the command line resolved.
type Env struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string

	Cfg  *config.Config // resolved: flag > env > file > default
	Data string         // the data directory (absolute)
	// DataFrom says who chose Data: "--data", "QUESTBOX_DATA", "the
	// config file F"; "" for the built-in default (see mayCreateStore).
	DataFrom string
	Log      *slog.Logger
	// Redact masks the configured secrets in whatever is printed, logged
	// or returned.
	Redact *config.Redactor
	// Version is the running binary's version.
	Version string
	// FormatEvent is the line, without its newline, that the daemon
	// prints on Stdout for each event its engine commits.
	FormatEvent func(api.Event) string
	// LoadConfig loads the configuration again as the command line
	// resolved it (the daemon calls it on SIGHUP).
	LoadConfig func() (*config.Config, error)
}

// ExitError carries an exit code. A nil Err means the command has already
// said all it had to (a FAIL verdict is printed on stdout, not as an
// error; the daemon's restart into a staged release).
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// usagef is a usage or input error (exit 1).
func usagef(format string, args ...any) error {
	return &ExitError{Code: api.ExitUsage, Err: fmt.Errorf(format, args...)}
}
