package daemon

// The box's network: one ground.Net (the gate's resolver for URLs, MX
// records and dials) and one ground.Probe (is the box online?) per process,
// built from the [network] section and shared by every evaluation. The CLI
// builds them too, because `submit` without a daemon evaluates ground rules
// itself.

import (
	"context"
	"log/slog"
	"sync"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/gates"
	"github.com/questbox/questbox/gates/ground"
	"github.com/questbox/questbox/internal/config"
)

// network is the box's resolver and online probe.
type network struct {
	net    *ground.Net
	probe  *ground.Probe // nil: network.probe = "", always online
	target string        // the probe's host:port
	exec   ground.Exec   // the program rules' runner, confined (wiring.go)

	mu        sync.Mutex // guards listeners
	listeners []func(online bool)
}

// newNetwork builds the resolver and the probe of cfg.
func newNetwork(cfg config.Network) *network {
	n := &network{target: cfg.Probe}
	n.net = ground.NewNet(ground.NetConfig{
		Timeout:      cfg.FetchTimeout.Duration,
		MaxBody:      int64(cfg.MaxBody),
		AllowPrivate: cfg.AllowPrivate,
	})
	if cfg.Probe != "" {
		// NewProbe fails only without a check function.
		p, err := ground.NewProbe(ground.ProbeConfig{
			Check:    ground.DialCheck(nil, cfg.Probe),
			TTL:      cfg.ProbeTTL.Duration,
			OnChange: n.changed,
		})
		if err != nil {
			panic("BUG: ground.NewProbe: " + err.Error())
		}
		n.probe = p
	}
	return n
}

// onChange adds a listener for the probe's changes. Listeners run while
// the probe holds its lock: they must be quick and must not ask the probe.
func (n *network) onChange(fn func(online bool)) {
	n.mu.Lock()
	n.listeners = append(n.listeners, fn)
	n.mu.Unlock()
}

func (n *network) changed(online bool) {
	n.mu.Lock()
	ls := n.listeners
	n.mu.Unlock()
	for _, fn := range ls {
		fn(online)
	}
}

// engineOnline is Options.Online: nil (always online) without a probe.
func (n *network) engineOnline() func() bool {
	if n.probe == nil {
		return nil
	}
	return func() bool { return n.probe.Online(context.Background()) }
}

// grounder is Options.Ground: a fresh snapshot per evaluation over the
// shared resolver, an exec runner for program rules and the probe.
func (n *network) grounder() gates.Grounder {
	cfg := ground.Config{Resolver: n.net, Runner: n.exec}
	if n.probe != nil {
		cfg.Online = n.probe.Online
	}
	return ground.NewSnapshot(cfg)
}

// recordTo records the probe's changes as device events of the engine eng
// returns ("network_up" / "network_down" with the probe's target; none
// while it returns nil: a daemon between two sessions). The first result
// of a process is recorded only when it is offline: every CLI process
// probes afresh, and "still online" is not news.
func (n *network) recordTo(eng func() *engine.Engine, log *slog.Logger) {
	var mu sync.Mutex // guards first
	first := true
	n.onChange(func(online bool) {
		mu.Lock()
		wasFirst := first
		first = false
		mu.Unlock()
		if wasFirst && online {
			return
		}
		outcome := engine.DeviceNetworkUp
		if !online {
			outcome = engine.DeviceNetworkDown
		}
		e := eng()
		if e == nil {
			return
		}
		if err := e.RecordDeviceEvent(engine.DeviceEvent{What: outcome, Target: n.target}); err != nil {
			log.Error("could not record the network change", "outcome", outcome, "err", err)
		}
	})
}
