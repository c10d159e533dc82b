package box

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/questbox/questbox/device"
	"github.com/questbox/questbox/engine"
)

// Bounds of Press.
const (
	MaxPressHold  = time.Minute
	MaxPressTimes = 9
	// pressTimeout bounds a press: it plays in simulated time and returns
	// at once unless the daemon is stopping.
	pressTimeout = 30 * time.Second
)

// Status is the box as `device status`, the dashboard and MQTT show it.
type Status struct {
	Snapshot  device.Snapshot // the backend and each LED's pin, pattern and level
	ButtonPin int             // BCM; negative when not fitted
	Simulated bool            // the sim backend: the button can be pressed through the API
	ACTPath   string          // "" when the ACT LED does not mirror the state
	ACT       string          // the ACT LED's pattern
	State     device.State
	Halted    error // the store is refused (the daemon waits for a repair)
	Online    bool
	Broker    Broker
	// Now is the box's time of the status: the API lists the consent
	// queue as of Now beside it, so the list and the LEDs agree.
	Now time.Time
}

// Status returns the box's state now (and shows it on the LEDs).
func (b *Box) Status() (Status, error) {
	now := b.clock.Now()
	b.mu.Lock()
	st := Status{ButtonPin: b.pin, Simulated: b.dev.Backend() == device.BackendSim, Halted: b.halt,
		Online: !b.offline, Broker: b.broker, Now: now}
	b.mu.Unlock()
	// The state as of now, not as the loop last showed it: a change just
	// reported (a tick, the network) is in the answer.
	st.State, _, _ = b.show(now)
	b.wake() // the loop recomputes its deadlines
	st.Snapshot = b.dev.Snapshot()
	if b.act != nil {
		st.ACTPath, st.ACT = b.act.Dir(), b.act.Pattern().String()
	}
	return st, nil
}

// PressResult is one press and what the box did with it.
type PressResult struct {
	Press   string // "long (2s)"
	Kind    string // "long"
	Outcome string
}

// Press presses the simulated button times times, holding it for hold
// each time, and returns what each press did. It returns ErrNotSimulated on
// real pins and an error when the box stops first. Requests are served one
// at a time, so each sees only its own presses.
func (b *Box) Press(ctx context.Context, hold time.Duration, times int) ([]PressResult, error) {
	if hold < 0 || hold > MaxPressHold {
		return nil, fmt.Errorf("hold %s must be between 0 and %s: %w", hold, MaxPressHold, engine.ErrInvalid)
	}
	if times < 1 || times > MaxPressTimes {
		return nil, fmt.Errorf("times %d must be between 1 and %d: %w", times, MaxPressTimes, engine.ErrInvalid)
	}
	if b.dev.Backend() != device.BackendSim {
		return nil, ErrNotSimulated
	}
	pctx, cancel := context.WithTimeout(ctx, pressTimeout)
	defer cancel()
	b.mu.Lock()
	stopped := b.stopped
	b.mu.Unlock()
	if stopped != nil {
		go func() {
			select {
			case <-stopped:
				cancel()
			case <-pctx.Done():
			}
		}()
	}
	return b.presses.play(pctx, b.dev, hold, times)
}

// pressLog collects the presses of one Press request.
type pressLog struct {
	cmd sync.Mutex // serialises requests, so each sees only its own presses

	mu     sync.Mutex // guards active and got
	active bool
	got    []PressResult
}

func (l *pressLog) record(p device.Press, outcome string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.active {
		l.got = append(l.got, PressResult{Press: p.String(), Kind: p.Kind.String(), Outcome: outcome})
	}
}

func (l *pressLog) play(ctx context.Context, dev *device.Device, hold time.Duration, times int) ([]PressResult, error) {
	l.cmd.Lock()
	defer l.cmd.Unlock()
	l.mu.Lock()
	l.active, l.got = true, nil
	l.mu.Unlock()
	err := dev.Press(ctx, hold, times)
	l.mu.Lock()
	got := l.got
	l.active, l.got = false, nil
	l.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("the daemon is stopping (%v): %w", err, ErrStopping)
	}
	return got, nil
}
