package daemon

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/questbox/questbox/internal/daemon/daemontest"
)

// TestLongStepExtendsTheStartTimeout runs start-up steps under a stand-in
// for systemd's notify socket: a long step asks for more time while it
// works, within a budget that grows with the store, and gives the rest of
// the start-up the unit's timeout again; a short step asks nothing; a step
// past its budget stops asking, so a hang in it meets the unit's timeout.
func TestLongStepExtendsTheStartTimeout(t *testing.T) {
	const every = 20 * time.Millisecond
	const rest = every / 2 // below every: only the store's size buys time
	ext := func(d time.Duration) string { return fmt.Sprintf("EXTEND_TIMEOUT_USEC=%d", d.Microseconds()) }
	newTimer := func(t *testing.T) (stepTimer, *net.UnixConn, <-chan string) {
		notify := daemontest.ListenNotify(t, filepath.Join(daemontest.ShortDir(t), "notify"))
		e := &Env{Getenv: func(k string) string {
			if k == "NOTIFY_SOCKET" {
				return notify.LocalAddr().String()
			}
			return ""
		}}
		logs := make(chan string, 16)
		s := e.stepTimer(func(msg string, args ...any) { logs <- msg })
		s.every, s.by, s.rest, s.perMiB = every, 3*every, rest, every
		return s, notify, logs
	}
	// quiet checks that nothing but a mark sent now is on the socket.
	quiet := func(t *testing.T, notify *net.UnixConn) {
		t.Helper()
		if err := sdNotify(func(string) string { return notify.LocalAddr().String() }, "MARK"); err != nil {
			t.Fatal(err)
		}
		if got := daemontest.ReadNotify(t, notify); got != "MARK" {
			t.Fatalf("systemd got %q, want nothing", got)
		}
	}

	t.Run("long step on a big store", func(t *testing.T) {
		s, notify, logs := newTimer(t)
		boom := errors.New("the step's own error")
		got := make(chan string, 8)
		err := s.run("the check", 10<<20, func() error {
			// Two asks for more while it works (budget: rest + 10 MiB ×
			// every), then it ends.
			for range 2 {
				got <- daemontest.ReadNotify(t, notify)
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("run returned %v, want the step's error", err)
		}
		close(got)
		for m := range got {
			if m != ext(3*every) {
				t.Errorf("while the step ran systemd got %q, want %q", m, ext(3*every))
			}
		}
		// More asks may have been sent before the step's end was seen
		// (a loaded machine); then the rest of the start-up gets the
		// unit's timeout.
		m := daemontest.ReadNotify(t, notify)
		for m == ext(3*every) {
			m = daemontest.ReadNotify(t, notify)
		}
		if m != ext(rest) {
			t.Errorf("after the step systemd got %q, want %q", m, ext(rest))
		}
		quiet(t, notify)
		if msg := <-logs; !strings.Contains(msg, "the check takes a while") {
			t.Errorf("journal: %q, want the check named", msg)
		}
	})

	t.Run("short step", func(t *testing.T) {
		s, notify, _ := newTimer(t)
		s.every = time.Hour
		if err := s.run("the check", 10<<20, func() error { return nil }); err != nil {
			t.Fatal(err)
		}
		quiet(t, notify)
	})

	t.Run("past its budget", func(t *testing.T) {
		s, notify, logs := newTimer(t)
		var said string
		if err := s.run("the check", 0, func() error { said = <-logs; return nil }); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(said, "longer than its budget") {
			t.Errorf("journal: %q, want the budget named", said)
		}
		// It never asked, so it gives nothing back after either.
		quiet(t, notify)
	})

	t.Run("not under systemd", func(t *testing.T) {
		e := &Env{Getenv: func(string) string { return "" }}
		ran := false
		if err := e.stepTimer(func(string, ...any) {}).run("the check", 0, func() error { ran = true; return nil }); err != nil || !ran {
			t.Fatalf("run: %v, ran %v", err, ran)
		}
	})
}
