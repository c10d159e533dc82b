package ground

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// ProbeConfig configures a [Probe].
type ProbeConfig struct {
	// Check is the cheap connectivity test; nil error means online. See
	// [DialCheck]. Required.
	Check func(ctx context.Context) error
	// TTL is how long a result is reused (default 30s).
	TTL time.Duration
	// Timeout bounds one Check (default 3s).
	Timeout time.Duration
	// Now is the clock (default time.Now). Tests pass a fake.
	Now func() time.Time
	// OnChange, if set, is called with the new state whenever a check
	// gives a different answer from the previous one, and after the very
	// first check. It is called synchronously, with the probe's lock held,
	// so calls are never reordered: it must be quick and must not call the
	// probe (the engine emits a device event and returns).
	OnChange func(online bool)
}

// Probe tells whether the box is online, cheaply: one Check per TTL at
// most, whatever the number of callers. Safe for concurrent use; callers
// that arrive while a check runs wait for its answer.
type Probe struct {
	cfg ProbeConfig

	mu     sync.Mutex // guards the fields below, and serialises checks
	known  bool       // a check has completed
	online bool
	at     time.Time // when the last check completed
	stale  bool      // Invalidate was called since
}

// NewProbe returns a probe; it checks nothing until asked.
func NewProbe(cfg ProbeConfig) (*Probe, error) {
	if cfg.Check == nil {
		return nil, errors.New("ground: probe: no check function")
	}
	if cfg.TTL <= 0 {
		cfg.TTL = 30 * time.Second
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 3 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Probe{cfg: cfg}, nil
}

// Online reports the cached state, checking again when it is older than the
// TTL (or was invalidated).
func (p *Probe) Online(ctx context.Context) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.cfg.Now()
	if p.known && !p.stale && now.Sub(p.at) < p.cfg.TTL && !now.Before(p.at) {
		return p.online
	}
	cctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	online := p.cfg.Check(cctx) == nil
	cancel()
	changed := !p.known || online != p.online
	p.known, p.online, p.at, p.stale = true, online, p.cfg.Now(), false
	if changed && p.cfg.OnChange != nil {
		p.cfg.OnChange(online)
	}
	return online
}

// Invalidate makes the next Online check again, for example after a
// transport error suggested that the state changed.
func (p *Probe) Invalidate() {
	p.mu.Lock()
	p.stale = true // keep known and online: the next check compares with them
	p.mu.Unlock()
}

// DialCheck returns a probe check that opens a TCP connection to hostport
// (for example the MQTT broker or "1.1.1.1:53") with d, or with a plain
// dialer when d is nil.
func DialCheck(d *net.Dialer, hostport string) func(ctx context.Context) error {
	if d == nil {
		d = &net.Dialer{}
	}
	return func(ctx context.Context) error {
		c, err := d.DialContext(ctx, "tcp", hostport)
		if err != nil {
			return fmt.Errorf("ground: probe %s: %w", hostport, err)
		}
		return c.Close()
	}
}
