package daemon

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/questbox/questbox/ui/api"
	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair and returns its terminal end.
func openPTY(t *testing.T) *os.File {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	pts, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pts.Close() })
	return pts
}

// On a terminal the daemon's log says warnings only, so that the event
// lines on stdout read as a story; a pipe or a file gets every info
// record, and --log-level overrides both.
func TestRunLogLevel(t *testing.T) {
	tty := openPTY(t)
	noJournal := func(string) string { return "" }
	cases := []struct {
		name   string
		flag   string
		stderr any
		getenv func(string) string
		want   slog.Level
	}{
		{"a terminal", "", tty, noJournal, slog.LevelWarn},
		{"a pipe or file", "", &bytes.Buffer{}, noJournal, slog.LevelInfo},
		{"the flag on a terminal", "info", tty, noJournal, slog.LevelInfo},
		{"the flag, debug", "debug", &bytes.Buffer{}, noJournal, slog.LevelDebug},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := &Env{Stderr: tc.stderr.(io.Writer), Getenv: tc.getenv}
			got, err := (&Flags{LogLevel: tc.flag}).level(e)
			if err != nil || got != tc.want {
				t.Fatalf("level = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
	_, err := (&Flags{LogLevel: "loud"}).level(&Env{Stderr: &bytes.Buffer{}})
	var u *ExitError
	if !errors.As(err, &u) || u.Code != api.ExitUsage {
		t.Fatalf("--log-level loud: %v, want a usage error", err)
	}
}
