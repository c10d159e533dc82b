package daemon

import (
	"context"
	"io"
	"log/slog"

	"github.com/questbox/questbox/device/box"
	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/internal/config"
	"github.com/questbox/questbox/internal/journald"
)

// NewLogger is the process's logger on w: a text handler whose every
// message and attribute goes through r, the configuration's redactor, so no
// log line carries a configured secret (config.Redactor says which).
//
// Under systemd (journald.Available), the records of agent runs go to the
// journal as structured entries (QUESTBOX_RUN=, QUESTBOX_QUEST=,
// QUESTBOX_NODE=), redacted as the text is.
func NewLogger(w io.Writer, getenv func(string) string, r *config.Redactor, opts *slog.HandlerOptions) *slog.Logger {
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if getenv != nil && journald.Available(getenv) {
		h = journald.New(h, journald.Socket)
	}
	return slog.New(&redactHandler{h: h, r: r})
}

// newLogger is NewLogger with e's environment and redactor.
func (e *Env) newLogger(w io.Writer, opts *slog.HandlerOptions) *slog.Logger {
	return NewLogger(w, e.Getenv, e.Redact, opts)
}

// redactHandler masks the secrets of r in a record before h formats it.
type redactHandler struct {
	h slog.Handler
	r *config.Redactor
}

func (h *redactHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.h.Enabled(ctx, l) }

func (h *redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.String(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.h.Handle(ctx, out)
}

func (h *redactHandler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = h.attr(a)
	}
	return &redactHandler{h: h.h.WithAttrs(red), r: h.r}
}

func (h *redactHandler) WithGroup(name string) slog.Handler {
	return &redactHandler{h: h.h.WithGroup(name), r: h.r}
}

// attr is a with every string it prints redacted: errors, URLs and
// anything else formatted as text.
func (h *redactHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindGroup:
		g := v.Group()
		red := make([]any, len(g))
		for i, ga := range g {
			red[i] = h.attr(ga)
		}
		return slog.Group(a.Key, red...)
	case slog.KindString, slog.KindAny:
		return slog.String(a.Key, h.r.String(v.String()))
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// setBroker shows the broker's state on the box (and so in the API's
// views, the dashboard and MQTT's summary) with its error redacted.
func (d *daemon) setBroker(b box.Broker) {
	b.Error = d.e.Redact.String(b.Error)
	d.box.SetBroker(b)
}

// redactedProvider is a provider whose errors have the configured secrets
// masked: the engine keeps them as a stopped quest's reason or a fact, and
// the API, the dashboard and MQTT show them. errors.Is still reaches what
// they wrap (agent.ErrNotFound, agent.ErrUnavailable).
type redactedProvider struct {
	p engine.Provider
	r *config.Redactor
}

// Run implements engine.Provider.
func (p redactedProvider) Run(ctx context.Context, req agent.Request) (agent.Reply, error) {
	rep, err := p.p.Run(ctx, req)
	return rep, p.r.Error(err)
}

// Check implements engine.ProviderChecker when the provider does.
func (p redactedProvider) Check() error {
	if c, ok := p.p.(engine.ProviderChecker); ok {
		return p.r.Error(c.Check())
	}
	return nil
}
