package daemon

// SIGHUP (`systemctl reload questbox`): the daemon reads its config file
// again and applies what it can without dropping a run (docs/reload.md):
// the providers, roles, gate profiles, quest defaults, L2 judge, privacy,
// council providers and Teams' accept criteria go to the engine
// (engine.Reconfigure: new dispatches use them, runs in flight finish on
// the config they started with), MQTT and the dashboard start again with
// their new settings when those changed, and the logs' limits, the LEDs'
// polarity, consent expiry and the memory limit are set. The keys that
// need a restart (config.Reloadable says which) are named in one log line
// and change nothing. A file that does not pass the checks of
// --check-config is refused as a whole, each problem logged, and the
// daemon keeps the config it runs on.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/questbox/questbox/internal/config"
	"github.com/questbox/questbox/ui/api"
)

// watchReload handles SIGHUP until ctx ends or stop is called. It is
// registered before anything else, so that a SIGHUP during start-up does
// not kill the daemon (Go's default for SIGHUP is to exit).
func (d *daemon) watchReload(ctx context.Context) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				d.reload()
				if d.restart != nil {
					d.restartForUpdate()
				}
			}
		}
	})
	return func() {
		signal.Stop(hup)
		cancel()
		wg.Wait()
	}
}

// inForce is the configuration the daemon runs on, with its generation
// and load time (for the API: Options.Loaded).
func (d *daemon) inForce() api.LoadedConfig {
	if l := d.loaded.Load(); l != nil {
		return *l
	}
	return api.LoadedConfig{Config: d.cfg, Generation: 1}
}

// current is the configuration in force.
func (d *daemon) current() *config.Config { return d.inForce().Config }

// reload reads the config file again and applies it (see the top of this
// file). It returns the changed keys that need a restart, and the reason
// the file was refused.
func (d *daemon) reload() ([]string, error) {
	cfg, err := d.e.LoadConfig()
	if err != nil {
		return nil, d.refuse(err)
	}
	keys, err := cfg.Keys()
	if err != nil {
		return nil, d.refuse(err)
	}
	if d.flags != nil {
		// What the command line set over the file at start-up still
		// stands (--gpio, --listen, --demo's provider).
		if _, _, err := d.flags.apply(cfg); err != nil {
			return nil, d.refuse(err)
		}
	}
	w := newWiring(cfg, d.e.Getenv, d.delay, d.usage)
	if problems := configProblems(cfg, w, d.e.Version, false); len(problems) > 0 {
		return nil, d.refuse(errors.Join(problems...))
	}
	for _, name := range slices.Sorted(maps.Keys(w.problems)) {
		d.log.Warn("reload: provider cannot run yet; quests on it stop with this message", "provider", name, "err", w.problems[name])
	}

	d.mu.Lock()
	defer d.mu.Unlock()
	prev := d.inForce()
	eff := effective(prev.Config, cfg)
	var restart, applied []string
	for _, k := range config.Changed(d.fileKeys, keys) {
		if !config.Reloadable(k) {
			restart = append(restart, k)
		}
	}
	since := d.appliedKeys
	if since == nil {
		since = &d.fileKeys
	}
	for _, k := range config.Changed(*since, keys) {
		if config.Reloadable(k) {
			applied = append(applied, k)
		}
	}
	if len(restart) > 0 {
		d.log.Warn("reload: these keys changed and need a restart (systemctl restart questbox); they are not applied", "keys", restart)
	}
	memApplied := d.mem.reload(eff.Daemon.MemoryLimit)
	if len(applied) == 0 && !memApplied {
		d.log.Info("reload: config read again; nothing to apply", "file", source(cfg), "generation", prev.Generation)
		d.notify("STATUS=config reloaded: nothing to apply")
		return restart, nil
	}
	if err := d.applyLocked(eff, w, applied); err != nil {
		// Checked above as --check-config checks; what is left is the
		// run logs' directory or the judge's cache: nothing applied.
		return restart, d.refuse(err)
	}
	gen := prev.Generation + 1
	d.loaded.Store(&api.LoadedConfig{Config: eff, Generation: gen, At: time.Now()})
	d.appliedKeys = &keys
	d.log.Info("reload: config applied; runs in flight finish on the config they started with", "file", source(cfg), "generation", gen, "keys", applied)
	d.notify(fmt.Sprintf("STATUS=config generation %d applied", gen))
	return restart, nil
}

// refuse logs why a reloaded file is refused, one line per problem, and
// returns err: the daemon keeps the config it runs on.
func (d *daemon) refuse(err error) error {
	problems := flatten(err)
	for _, p := range problems {
		d.log.Error("reload: " + d.e.Redact.Error(p).Error())
	}
	gen := d.inForce().Generation
	d.log.Error("reload: the config file was refused; still running on the config in force, and a restart would fail until it is fixed",
		"problems", len(problems), "generation", gen)
	d.notify("STATUS=config reload refused: the file is invalid (see the journal)")
	return err
}

// flatten lists the errors err joins (errors.Join, nested), or err.
func flatten(err error) []error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range j.Unwrap() {
		out = append(out, flatten(e)...)
	}
	return out
}

// applyLocked applies eff, built into w, to the running session: the
// engine's options, the logs' limits, the LEDs, and MQTT and the
// dashboard when a key of theirs is among changed. d.mu is held. Between
// sessions (a restore) only the wiring changes: the next session starts
// on it.
func (d *daemon) applyLocked(eff *config.Config, w *wiring, changed []string) error {
	w.net = d.wire.net // the network is not reloaded: its probe and resolver stay
	if !d.up {
		d.wire = w
		return nil
	}
	opt, err := w.options(eff, d.log, d.st, d.eng.Logs())
	if err != nil {
		return err
	}
	if err := d.eng.Logs().SetLimits(int64(eff.Logs.PerRun), int64(eff.Logs.Total)); err != nil {
		return err
	}
	d.eng.Reconfigure(opt)
	d.wire = w
	d.dev.SetLEDsActiveLow(eff.GPIO.ActiveLow)
	if changedUnder(changed, "mqtt") {
		d.log.Info("reload: MQTT starts again with its new settings")
		d.stopMQTT()
		d.startMQTT(eff)
	}
	if changedUnder(changed, "dashboard") {
		d.log.Info("reload: the dashboard starts again with its new settings")
		d.dash.stop()
		d.serveDashboard(eff)
	}
	return nil
}

// changedUnder reports whether a key of section is among keys.
func changedUnder(keys []string, section string) bool {
	return slices.ContainsFunc(keys, func(k string) bool {
		return config.Reloadable(k) && len(k) > len(section) && k[:len(section)+1] == section+"."
	})
}

// effective is next as the running daemon applies it: what needs a
// restart (config.Reloadable) stays as in force, in prev.
func effective(prev, next *config.Config) *config.Config {
	eff := *next
	memory := next.Daemon.MemoryLimit
	eff.Daemon = prev.Daemon
	eff.Daemon.MemoryLimit = memory
	g := prev.GPIO
	g.ActiveLow, g.ConsentExpiry = next.GPIO.ActiveLow, next.GPIO.ConsentExpiry
	eff.GPIO = g
	eff.Network, eff.Backup = prev.Network, prev.Backup
	return &eff
}

// configProblems are what --check-config refuses in cfg, built into w:
// a provider that cannot run, a judge that cannot be built, a role's
// prompt template that does not load, and MQTT's password or TLS files
// that cannot be read. Unless missing is set, a provider whose executable
// is not installed yet is not one: start-up accepts it too, and the
// provider looks for it again at each run.
func configProblems(cfg *config.Config, w *wiring, version string, missing bool) []error {
	src := source(cfg)
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(w.problems)) {
		if _, ok := w.providers[name]; ok && !missing {
			continue // registered: its executable is looked up at each run
		}
		errs = append(errs, fmt.Errorf("%s: providers.%s: %v", src, name, w.problems[name]))
	}
	if w.judgeErr != nil {
		errs = append(errs, fmt.Errorf("%s: %v", src, w.judgeErr))
	}
	if _, err := cfg.RoleOptions(os.ReadFile); err != nil { // the roles' prompt templates
		errs = append(errs, err)
	}
	if cfg.MQTT.Enabled() {
		if _, err := mqttOptions(cfg, version, os.Hostname); err != nil { // the password and TLS files
			errs = append(errs, fmt.Errorf("%s: %v", src, err))
		}
	}
	return errs
}

// source names where cfg came from.
func source(cfg *config.Config) string {
	if cfg.Path == "" {
		return "built-in defaults (no config file)"
	}
	return cfg.Path
}
