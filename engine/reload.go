package engine

// Options a running engine takes again (the daemon's SIGHUP).
//
// Reconfigure swaps, in one step, the options that say what quests run on
// and how their answers are judged: providers (and what their runs
// reserve of a token budget), roles, gate catalogs, the L2 judge,
// vendors and redaction, the council's providers, the quest defaults,
// consent expiry and the outbox bound. Everything reads them
// through conf, once per use, so no reader sees half of one and half of
// the other. A dispatch keeps the options it was made with
// (dispatch.opt): its provider, its prompt, its redaction and its
// verdict's gate and judge are those of the config it started under,
// whatever a reload changes while it runs. The rest of Options (the
// clock, the store's bounds, the network, the run logs, max_parallel) is
// fixed for the engine's life.

// conf is the options in force.
func (e *Engine) conf() *Options { return e.cur.Load() }

// Reconfigure makes the engine use opt's Providers, Defaults, Catalog,
// GateNames, Judge, Council, Roles, Vendors, Redact, MaxTokens,
// ConsentExpiry and OutboxMax from now on, as New would have set them; every other field of
// opt is ignored. Runs in flight, and runs dispatched but not started
// yet, finish on the options they were dispatched with. It is safe to
// call while the engine ticks. Quests keep what they were created with:
// a provider removed from opt stops the quests that name it, at their
// next dispatch, with the reason.
func (e *Engine) Reconfigure(opt Options) {
	next := *e.conf()
	fillDefaults(&opt.Defaults)
	if opt.Catalog == nil {
		opt.Catalog = builtinCatalog
	}
	if opt.OutboxMax > 0 && opt.OutboxMax < next.EventRetention {
		opt.OutboxMax = next.EventRetention
	}
	next.Providers, next.Defaults, next.Catalog, next.GateNames = opt.Providers, opt.Defaults, opt.Catalog, opt.GateNames
	next.Judge, next.Council, next.Roles = opt.Judge, opt.Council, opt.Roles
	next.Vendors, next.Redaction, next.MaxTokens = opt.Vendors, opt.Redaction, opt.MaxTokens
	next.ConsentExpiry, next.OutboxMax = opt.ConsentExpiry, opt.OutboxMax
	e.cur.Store(&next)
}
