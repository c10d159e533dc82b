package ground

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/questbox/questbox/gates"
)

// DefaultRunTimeout is the timeout of a program check that names none.
const DefaultRunTimeout = 30 * time.Second

// Config configures a [Snapshot]. Resolver is required for network
// requests, Runner for program checks; a request whose resolver or runner
// is missing is answered with Observation.Err (a fact), not deferred.
type Config struct {
	Resolver Resolver
	Runner   Runner
	// Online reports whether the box is online (usually Probe.Online). Nil
	// means always online.
	Online func(ctx context.Context) bool
	// Parallel bounds concurrent resolutions per Resolve call (default 4).
	Parallel int
}

// Snapshot answers the requests of one evaluation. Each distinct request is
// resolved at most once for the Snapshot's lifetime, even when several rules
// or goroutines ask at the same time: later askers wait for the first
// answer. Make one per evaluation so that answers are fresh. Safe for
// concurrent use.
type Snapshot struct {
	cfg Config

	mu    sync.Mutex       // guards calls
	calls map[string]*call // request key → its one resolution
}

type call struct {
	done chan struct{} // closed when obs is set
	obs  gates.Observation
}

// NewSnapshot returns an empty snapshot.
func NewSnapshot(cfg Config) *Snapshot {
	if cfg.Parallel <= 0 {
		cfg.Parallel = 4
	}
	return &Snapshot{cfg: cfg, calls: map[string]*call{}}
}

// Online implements [gates.Grounder].
func (s *Snapshot) Online(ctx context.Context) bool {
	if s.cfg.Online == nil {
		return true
	}
	return s.cfg.Online(ctx)
}

// Resolve implements [gates.Grounder]: it answers every request
// concurrently (at most Config.Parallel at a time), each once. It returns an
// error only when ctx ends first.
func (s *Snapshot) Resolve(ctx context.Context, reqs []gates.Request) (gates.GroundFacts, error) {
	out := make(gates.GroundFacts, len(reqs))
	var mu sync.Mutex // guards out
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.cfg.Parallel)
	for _, r := range reqs {
		g.Go(func() error {
			o, err := s.Observe(gctx, r)
			if err != nil {
				return err
			}
			mu.Lock()
			out[r.Key()] = o
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// Observe answers one request, resolving it only if no one has yet. It
// returns ctx's error if ctx ends while waiting.
func (s *Snapshot) Observe(ctx context.Context, r gates.Request) (gates.Observation, error) {
	key := r.Key()
	s.mu.Lock()
	c, ok := s.calls[key]
	if !ok {
		c = &call{done: make(chan struct{})}
		s.calls[key] = c
	}
	s.mu.Unlock()
	if !ok {
		c.obs = s.resolve(ctx, r)
		close(c.done)
	}
	select {
	case <-c.done:
		return c.obs, nil
	case <-ctx.Done():
		return gates.Observation{}, fmt.Errorf("ground: waiting for %s: %w", r, context.Cause(ctx))
	}
}

// resolve asks the resolver or runner and classifies the outcome.
func (s *Snapshot) resolve(ctx context.Context, r gates.Request) gates.Observation {
	if r.Kind.Network() && s.cfg.Resolver == nil {
		return gates.Observation{Err: "no network resolver is configured"}
	}
	switch r.Kind {
	case gates.ReqFetchURL:
		b, err := s.cfg.Resolver.FetchURL(ctx, r.Target)
		if err != nil {
			return failed(err)
		}
		return gates.Observation{Status: b.Status, Body: string(b.Data), Truncated: b.Truncated}
	case gates.ReqLookupMX:
		mx, err := s.cfg.Resolver.LookupMX(ctx, r.Target)
		if err != nil {
			return failed(err)
		}
		return gates.Observation{MX: mx}
	case gates.ReqDial:
		if err := s.cfg.Resolver.Dial(ctx, r.Target); err != nil {
			return failed(err)
		}
		return gates.Observation{Reachable: true}
	case gates.ReqRun:
		if s.cfg.Runner == nil {
			return gates.Observation{Err: "no program runner is configured"}
		}
		if len(r.Argv) == 0 {
			return gates.Observation{Err: "empty argv"}
		}
		timeout := DefaultRunTimeout
		if r.TimeoutMillis > 0 {
			timeout = time.Duration(r.TimeoutMillis) * time.Millisecond
		}
		rctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		res, err := s.cfg.Runner.Run(rctx, r.Argv, []byte(r.Stdin))
		if ctx.Err() != nil { // our caller gave up, not the program
			return gates.Observation{Transport: "cancelled: " + context.Cause(ctx).Error()}
		}
		if err != nil {
			return gates.Observation{Err: err.Error()}
		}
		return gates.Observation{ExitCode: res.ExitCode, Stdout: res.Stdout, TimedOut: res.TimedOut}
	}
	return gates.Observation{Err: "unknown request kind " + r.Kind.String()}
}

// failed turns a resolver error into an observation.
func failed(err error) gates.Observation {
	if IsTransport(err) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return gates.Observation{Transport: err.Error()}
	}
	return gates.Observation{Err: err.Error()}
}
