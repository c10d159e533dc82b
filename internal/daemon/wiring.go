package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/council"
	"github.com/questbox/questbox/engine/runlog"
	"github.com/questbox/questbox/gates"
	"github.com/questbox/questbox/gates/judge"
	"github.com/questbox/questbox/internal/config"
	"github.com/questbox/questbox/internal/confine"
)

// wiring is what the engine is built from: providers, gate catalogs, the
// network (resolver and probe) and the L2 judge's models.
type wiring struct {
	providers map[string]engine.Provider
	// problems says, per configured provider, why it cannot run right now
	// (an executable not on PATH, a configuration the provider refuses).
	problems map[string]error
	// warnings are doubts that need not stop it (an API key variable that
	// is not set in this process's environment).
	warnings map[string]error

	gates *catalogs
	net   *network
	// usage adds up what each provider's runs used, for the metrics.
	usage *usageMeter

	// redact masks the configured secrets in what the providers say.
	redact *config.Redactor
	// redaction is the engine's one rule of what leaves the box and what
	// a run's log keeps: [privacy] redact and the configured secrets.
	// The agents' prompts, the L2 judge's and the run logs go through it.
	redaction *engine.Redaction

	judgeModels [2]judge.Model // light, heavy; set when [judge] is configured
	judgeErr    error          // why the configured judge cannot be built

	// launcher confines every command agent, command judge and program
	// rule; nil with confineErr when it cannot be made, and then none of
	// them runs.
	launcher   *confine.Launcher
	confineErr error
}

// newWiring builds the providers of cfg. demoDelay slows the demo provider
// down so that the running LED is visible under `run --demo`.
//
// A command provider whose executable is missing is still registered, as a
// provider that looks the executable up again at each run: the engine
// stops its quest with the precise message (agent.ErrNotFound), and
// installing the program later makes it work without a restart.
//
// usage adds up what the providers' runs use; nil starts a new count (a
// reload passes the running daemon's, so the metrics' totals go on).
func newWiring(cfg *config.Config, getenv func(string) string, demoDelay time.Duration, usage *usageMeter) *wiring {
	if usage == nil {
		usage = newUsageMeter()
	}
	w := &wiring{providers: map[string]engine.Provider{}, problems: map[string]error{}, warnings: map[string]error{},
		gates: newCatalogs(cfg), net: newNetwork(cfg.Network), usage: usage}
	w.launcher, w.confineErr = newLauncher(cfg)
	if w.launcher != nil {
		w.net.exec.Confine = confineProgram(w.launcher)
	} else {
		w.net.exec.Confine = func(*exec.Cmd) (func(), error) { return nil, w.confineErr }
	}
	w.providers[config.ProviderDemo] = newDemo(demoDelay)
	for _, name := range slices.Sorted(maps.Keys(cfg.Providers)) {
		p := cfg.Providers[name]
		switch {
		case p.RunsCommand():
			if w.confineErr != nil {
				w.problems[name] = fmt.Errorf("command provider %q: %w", name, w.confineErr)
				continue
			}
			if err := checkWritable(w.launcher, p.Write); err != nil {
				w.problems[name] = fmt.Errorf("command provider %q: providers.%s.write: %w", name, name, err)
				continue
			}
			cc := agent.CommandConfig{Name: name, Argv: p.CommandArgv(), Timeout: p.Timeout.Duration,
				OutputCap: int64(p.OutputCap), Env: p.Env, Dir: p.Dir, Write: p.Write, Confine: w.launcher, Format: p.OutputFormat()}
			lc := &lazyCommand{cfg: cc}
			if err := lc.Check(); err != nil {
				w.problems[name] = err
				if !errors.Is(err, agent.ErrNotFound) {
					continue // misconfigured: the engine stops its quests as "not configured"
				}
			}
			w.providers[name] = lc
		case p.Type == config.TypeOpenAI:
			oc := openAIConfig(name, p, getenv)
			if p.APIKeyEnv != "" && oc.APIKey == "" {
				w.warnings[name] = fmt.Errorf("openai provider %q: environment variable %s (providers.%s.api_key_env) is not set here; requests go without a key", name, p.APIKeyEnv, name)
			}
			op, err := agent.NewOpenAI(oc)
			if err != nil {
				w.problems[name] = err
				continue
			}
			w.providers[name] = op
		}
	}
	// What the providers say goes into quest reasons, facts and the API's
	// answers: none of it may carry a configured secret.
	red := config.NewRedactor(cfg, getenv, os.ReadFile)
	w.redact = red
	w.redaction = engine.NewRedaction(cfg.RedactPatterns(), red)
	for name, p := range w.providers {
		p = meteredProvider{p: p, name: name, meter: w.usage}
		if name != config.ProviderDemo {
			p = redactedProvider{p: p, r: red}
		}
		w.providers[name] = p
	}
	for name, err := range w.problems {
		w.problems[name] = red.Error(err)
	}
	for name, err := range w.warnings {
		w.warnings[name] = red.Error(err)
	}
	w.buildJudgeModels(cfg, getenv)
	return w
}

// openAIConfig is the agent configuration of openai provider name.
func openAIConfig(name string, p config.Provider, getenv func(string) string) agent.OpenAIConfig {
	oc := agent.OpenAIConfig{Name: name, BaseURL: p.BaseURL, Model: p.Model, Timeout: p.Timeout.Duration,
		OutputCap: int64(p.OutputCap), MaxTokens: p.MaxTokens}
	if p.APIKeyEnv != "" {
		oc.APIKey = getenv(p.APIKeyEnv)
	}
	return oc
}

// catalogs are the gate catalogs of the configured profiles, each loaded
// once (a Catalog is immutable and safe for concurrent use).
type catalogs struct {
	cfg *config.Config

	mu     sync.Mutex // guards loaded
	loaded map[string]*gates.Catalog
}

func newCatalogs(cfg *config.Config) *catalogs {
	return &catalogs{cfg: cfg, loaded: map[string]*gates.Catalog{}}
}

// profile returns the catalog of the gate profile name. A profile that is
// not in the configuration (removed since a quest was created on it) is
// an error naming it and the known ones; the engine stops the quest with it.
func (c *catalogs) profile(name string) (*gates.Catalog, error) {
	if name == "" {
		name = config.DefaultGate
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cat, ok := c.loaded[name]; ok {
		return cat, nil
	}
	cat, err := c.cfg.Catalog(name)
	if err != nil {
		return nil, err
	}
	c.loaded[name] = cat
	return cat, nil
}

// quest is Options.Catalog: the catalog of q's gate profile.
func (c *catalogs) quest(q *engine.Quest) (*gates.Catalog, error) {
	if q == nil {
		return c.profile(c.cfg.Defaults.Gate)
	}
	cat, err := c.profile(q.Gate)
	if err != nil {
		return nil, fmt.Errorf("quest %s: %w; restore the profile in the config or create a new quest", q.ID, err)
	}
	return cat, nil
}

// options are the engine options from the configuration. The L2 judge, if
// configured, caches its verdicts in st. The runs' logs are logs, or,
// when nil, the directory next to the store, opened with cfg's limits.
func (w *wiring) options(cfg *config.Config, log *slog.Logger, st *engine.Store, logs *runlog.Dir) (engine.Options, error) {
	d := cfg.Defaults
	j, err := w.newJudge(cfg, st.JudgeCache())
	if err != nil {
		return engine.Options{}, err
	}
	roles, err := cfg.RoleOptions(os.ReadFile)
	if err != nil {
		return engine.Options{}, err
	}
	opt := engine.Options{
		Log:         log,
		Providers:   w.providers,
		MaxParallel: cfg.Daemon.MaxParallel,
		Defaults: engine.QuestDefaults{
			Mode:        d.Mode,
			Provider:    d.Provider,
			Gate:        d.Gate,
			Roles:       slices.Clone(d.Roles),
			Checkpoints: slices.Clone(d.Checkpoints),
			Limits: engine.Limits{MaxTries: d.MaxTries, MaxAgentRuns: d.MaxAgentRuns, WallClock: d.WallClock.Duration,
				TokenBudget: d.TokenBudget, MaxStalled: d.MaxStalled, OwnerEvery: d.OwnerEvery},
			TeamAccept: cfg.TeamAccept(),
		},
		Council:        council.Config{Reviewers: slices.Clone(cfg.Council.Reviewers), Judges: slices.Clone(cfg.Council.Judges)},
		Catalog:        w.gates.quest,
		GateNames:      cfg.GateNames,
		Online:         w.net.engineOnline(),
		Ground:         w.net.grounder,
		EventRetention: cfg.Daemon.EventRetention,
		ConsentExpiry:  cfg.GPIO.ConsentExpiry.Duration,
		Roles:          roles,
		Vendors:        cfg.Vendors(),
		Redaction:      w.redaction,
		EgressConsent:  cfg.Privacy.EgressConsent,
		MaxTokens:      maxTokens(cfg),
	}
	if cfg.MQTT.Enabled() {
		opt.OutboxMax = cfg.MQTT.OutboxMax // the bound of the events that wait for the broker
	}
	if j != nil {
		opt.Judge = j // a nil *judge.Judge in the interface would not be nil
	}
	// The runs' logs live next to the store, in files (docs/design.md, "Runs
	// and their logs").
	dir := filepath.Join(st.Dir(), "logs")
	switch {
	case logs != nil:
		opt.Logs = logs
	case st.ReadOnly():
		opt.Logs = runlog.OpenReadOnly(dir)
	default:
		if opt.Logs, err = runlog.Open(dir, int64(cfg.Logs.PerRun), int64(cfg.Logs.Total)); err != nil {
			return engine.Options{}, err
		}
	}
	return opt, nil
}

// maxTokens names the providers that cap their answers (an openai
// provider's max_tokens), with their caps: a run on one reserves by it
// (engine.Options.MaxTokens).
func maxTokens(cfg *config.Config) map[string]int {
	out := map[string]int{}
	for name, p := range cfg.Providers {
		if p.Type == config.TypeOpenAI && p.MaxTokens > 0 {
			out[name] = p.MaxTokens
		}
	}
	return out
}

// lazyCommand is a command provider whose executable is looked up until it
// is found; until then every run fails with agent.ErrNotFound, which the
// engine turns into a stopped quest carrying the message.
type lazyCommand struct {
	cfg agent.CommandConfig

	mu  sync.Mutex // guards cmd
	cmd *agent.Command
}

func (l *lazyCommand) get() (*agent.Command, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cmd != nil {
		return l.cmd, nil
	}
	c, err := agent.NewCommand(l.cfg)
	if err != nil {
		return nil, err
	}
	l.cmd = c
	return c, nil
}

// Check implements engine.ProviderChecker: the executable is looked up
// again, so a program installed since start-up is found.
func (l *lazyCommand) Check() error {
	_, err := l.get()
	return err
}

// Run implements engine.Provider.
func (l *lazyCommand) Run(ctx context.Context, req agent.Request) (agent.Reply, error) {
	c, err := l.get()
	if err != nil {
		return agent.Reply{}, err
	}
	return c.Run(ctx, req)
}

// close removes what the runs leave in the runs' directory (their
// temporary and scratch directories) once no run is in flight.
func (w *wiring) close() {
	if w.launcher != nil {
		_ = w.launcher.Close()
	}
}

// providerNames lists the providers a quest may use.
func (w *wiring) providerNames() string {
	names := []string{engine.ProviderExternal}
	for n := range w.providers {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
