package daemon

// The start-up's timeout. The unit's TimeoutStartSec is short
// (StartTimeout), so that a daemon that hangs before READY — a release
// on trial above all — is killed, and rolled back, within minutes rather
// than after two long timeouts. Start-up work that is legitimately long on
// a big store and a slow SD card (the store snapshot before a trial, its
// copy back at a rollback, the store's page-by-page check and compaction
// at open) asks systemd for more time while it runs (EXTEND_TIMEOUT_USEC,
// sd_notify(3)), within a budget that grows with the store's size; a hang
// anywhere else before READY meets the unit's own timeout.

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/questbox/questbox/engine"
)

const (
	// StartTimeout is the unit's TimeoutStartSec (TestUnitStartTimeout
	// pins the two equal): a start that sends neither READY=1 nor
	// EXTEND_TIMEOUT_USEC within it is killed by systemd.
	StartTimeout = 90 * time.Second
	// extendEvery is how often a long start-up step asks systemd for
	// extendBy more.
	extendEvery = 10 * time.Second
	extendBy    = 3 * extendEvery
	// extendPerMiB is what a long step may take per MiB of store, beyond
	// StartTimeout: a check or a copy reads the whole file and a
	// compaction writes it again, at 1 MiB/s on a poor card.
	extendPerMiB = 2 * time.Second
)

// stepTimer runs the long steps of a start-up (longStep). Its zero
// durations are not usable: newStepTimer fills them.
type stepTimer struct {
	notify func(state string) error // nil: not started by systemd
	log    func(msg string, args ...any)
	// every, by, rest and perMiB are extendEvery, extendBy, StartTimeout
	// and extendPerMiB (tests shorten them).
	every, by, rest, perMiB time.Duration
}

// stepTimer is the start-up's stepTimer: it notifies systemd when
// NOTIFY_SOCKET is set.
func (e *Env) stepTimer(log func(msg string, args ...any)) stepTimer {
	s := stepTimer{log: log, every: extendEvery, by: extendBy, rest: StartTimeout, perMiB: extendPerMiB}
	if e.Getenv("NOTIFY_SOCKET") != "" {
		s.notify = func(state string) error { return sdNotify(e.Getenv, state) }
	}
	return s
}

// storeSize is the store file's size, 0 when there is none yet.
func (e *Env) storeSize() int64 {
	fi, err := os.Stat(filepath.Join(e.Data, engine.StoreFile))
	if err != nil {
		return 0
	}
	return fi.Size()
}

// run runs fn, a start-up step whose length grows with a store of size
// bytes (what names it in the journal). A step that ends within every
// asks nothing. Past it, systemd is asked for by more every every, as long
// as the step has run less than rest plus perMiB per MiB of size; a step
// past that budget is logged and left to the unit's timeout. A step that
// asked gives the rest of the start-up rest again when it ends, so a hang
// after it is caught as soon as one at the start would be.
func (s stepTimer) run(what string, size int64, fn func() error) error {
	if s.notify == nil {
		return fn()
	}
	budget := s.rest + time.Duration(size>>20)*s.perMiB
	done := make(chan struct{})
	asked := make(chan bool, 1)
	go func() {
		t := time.NewTicker(s.every)
		defer t.Stop()
		start, n := time.Now(), 0
		defer func() { asked <- n > 0 }()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			if time.Since(start) >= budget {
				s.log("start-up: "+what+" has taken longer than its budget; systemd's start timeout is no longer extended", "budget", budget)
				<-done
				return
			}
			if n == 0 {
				s.log("start-up: "+what+" takes a while; systemd's start timeout is extended while it works", "budget", budget)
			}
			s.extend(s.by)
			n++
		}
	}()
	err := fn()
	close(done)
	if <-asked {
		s.extend(s.rest)
	}
	return err
}

func (s stepTimer) extend(d time.Duration) {
	if err := s.notify(fmt.Sprintf("EXTEND_TIMEOUT_USEC=%d", d.Microseconds())); err != nil {
		s.log("systemd notify failed", "state", "EXTEND_TIMEOUT_USEC", "err", err)
	}
}
