package device

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/questbox/questbox/internal/clock"
)

// DefaultACTPath is the Raspberry Pi's own activity LED in sysfs.
const DefaultACTPath = "/sys/class/leds/ACT"

// ACT mirrors one Pattern on a sysfs LED, the Pi's ACT LED, for a box with no
// external LEDs fitted (docs/design.md, "The LEDs"; feed it [Worst]). A
// chase, on one LED, is a 250 ms blip every 750 ms.
//
// Run takes the LED over (trigger "none") and writes its brightness as the
// pattern changes, sleeping in between like [Driver]; when it returns, the LED
// is dark and its previous trigger (on a Pi, SD-card activity) is restored. A
// missing or unwritable LED is not an error: Run logs a warning and returns
// nil, because the mirror is a convenience and the daemon must carry on.
//
// Set and Pattern are safe for concurrent use and never block.
type ACT struct {
	dir   string
	clock clock.Clock
	log   *slog.Logger
	wake  chan struct{}      // capacity 1: "pattern changed", coalesced
	syncc chan chan struct{} // test hook: run one pass, then acknowledge

	mu    sync.Mutex // guards pat and start
	pat   Pattern
	start time.Time // when pat was set, for its phase
}

// NewACT returns a mirror on the sysfs LED directory dir ("" is
// DefaultACTPath), showing PatternOff until Set. Call Run.
func NewACT(dir string, clk clock.Clock, log *slog.Logger) *ACT {
	if dir == "" {
		dir = DefaultACTPath
	}
	if clk == nil {
		clk = clock.Real{}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &ACT{dir: dir, clock: clk, log: log, wake: make(chan struct{}, 1), syncc: make(chan chan struct{}), start: clk.Now()}
}

// Dir returns the sysfs LED directory.
func (a *ACT) Dir() string { return a.dir }

// Set shows p. An unchanged pattern keeps its phase.
func (a *ACT) Set(p Pattern) {
	a.mu.Lock()
	if a.pat != p {
		a.pat, a.start = p, a.clock.Now()
	}
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// Pattern returns the pattern last Set.
func (a *ACT) Pattern() Pattern {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.pat
}

// Run drives the LED until ctx is done, then darkens it, restores its trigger
// and returns nil. See ACT for what happens when the LED cannot be used.
func (a *ACT) Run(ctx context.Context) error {
	prev, err := a.takeOver()
	if err != nil {
		a.log.Warn("device: the ACT LED cannot mirror the box's state; carrying on without it", "path", a.dir, "err", err)
		return nil
	}
	full := a.maxBrightness()
	var (
		written, valid, failed bool
	)
	write := func(on bool) {
		if valid && written == on {
			return
		}
		v := "0"
		if on {
			v = full
		}
		if err := a.write("brightness", v); err != nil {
			if !failed {
				failed = true
				a.log.Warn("device: cannot write the ACT LED", "path", a.dir, "err", err)
			}
			return
		}
		written, valid = on, true
	}
	defer func() {
		valid = false
		write(false)
		if prev != "" && prev != "none" {
			if err := a.write("trigger", prev); err != nil {
				a.log.Warn("device: cannot restore the ACT LED's trigger", "path", a.dir, "trigger", prev, "err", err)
			}
		}
	}()

	timer := &lazyTimer{clk: a.clock}
	defer timer.Stop()
	pass := func() {
		now := a.clock.Now()
		a.mu.Lock()
		p, elapsed := a.pat, now.Sub(a.start)
		a.mu.Unlock()
		write(p.On(elapsed, 0))
		timer.Stop()
		if t, ok := p.next(elapsed); ok {
			timer.Reset(t - elapsed)
		}
	}
	for {
		pass()
		select {
		case <-ctx.Done():
			return nil
		case <-a.wake:
		case <-timer.C():
		case ack := <-a.syncc:
			pass()
			close(ack)
		}
	}
}

// takeOver sets the LED's trigger to "none" and returns the one it had.
func (a *ACT) takeOver() (prev string, err error) {
	if _, err := os.Stat(filepath.Join(a.dir, "brightness")); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%s has no brightness file: no such LED on this machine", a.dir)
		}
		return "", err
	}
	if b, err := os.ReadFile(filepath.Join(a.dir, "trigger")); err == nil {
		prev = currentTrigger(string(b))
	}
	if err := a.write("trigger", "none"); err != nil {
		return "", err
	}
	return prev, nil
}

// currentTrigger picks the bracketed entry of a sysfs trigger list
// ("none [mmc0] timer" → "mmc0").
func currentTrigger(list string) string {
	for f := range strings.FieldsSeq(list) {
		if len(f) > 2 && f[0] == '[' && f[len(f)-1] == ']' {
			return f[1 : len(f)-1]
		}
	}
	return ""
}

// maxBrightness is the value that lights the LED fully ("1" if unknown).
func (a *ACT) maxBrightness() string {
	b, err := os.ReadFile(filepath.Join(a.dir, "max_brightness"))
	if err != nil {
		return "1"
	}
	if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n > 0 {
		return strconv.Itoa(n)
	}
	return "1"
}

// write writes one sysfs attribute; it never creates a file.
func (a *ACT) write(name, v string) error {
	f, err := os.OpenFile(filepath.Join(a.dir, name), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(v)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
