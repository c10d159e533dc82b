package daemon

import (
	"log/slog"
	"os"

	"github.com/questbox/questbox/internal/journald"
	"golang.org/x/sys/unix"
)

// level is the daemon log's level: --log-level, else warn when stderr is
// a terminal and no journal takes the records (`make run`: the event
// lines on stdout are what a person reads there, and each run's start
// and end would be said twice), else info (systemd's journal keeps the
// structured records; a file or pipe is read by a program).
func (c *Flags) level(e *Env) (slog.Level, error) {
	var l slog.Level
	switch {
	case c.LogLevel != "":
		if err := l.UnmarshalText([]byte(c.LogLevel)); err != nil {
			return 0, usagef("run: --log-level %q is not one of debug, info, warn, error", c.LogLevel)
		}
	case e.Getenv != nil && journald.Available(e.Getenv):
		l = slog.LevelInfo
	case isTerminal(e.Stderr):
		l = slog.LevelWarn
	default:
		l = slog.LevelInfo
	}
	return l, nil
}

// isTerminal reports whether w is a terminal.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
