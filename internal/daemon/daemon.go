package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/questbox/questbox/device"
	"github.com/questbox/questbox/device/box"
	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/internal/config"
	"github.com/questbox/questbox/ui/api"
)

// Demo settings used by `run --demo` (and so by `make run`).
const (
	demoTick  = 5 * time.Second
	demoDelay = 2 * time.Second // long enough to see the running LED
)

// Flags are what `questbox run`'s command line says: the daemon lays
// them over the config file at start and again at each reload.
type Flags struct {
	Tick        time.Duration // 0: the config's daemon.tick (5s with Demo)
	GPIO        string        // "": the config's gpio.backend
	Listen      string        // "": the config's daemon.listen
	Demo        bool
	CheckConfig bool
	Settle      time.Duration // see DefaultSettle
	LogLevel    string        // "": see Flags.level
}

// Run is `questbox run`: the daemon, from the configuration e resolved to
// the services it runs, until ctx ends (SIGINT, SIGTERM) or it stops to
// restart into a staged release (an *ExitError with ExitRestart). With
// c.CheckConfig it only checks the configuration and the providers.
func Run(ctx context.Context, e *Env, c *Flags) error {
	fileKeys, err := e.Cfg.Keys() // before the flags: SIGHUP compares files
	if err != nil {
		return err
	}
	tick, delay, err := c.apply(e.Cfg)
	if err != nil {
		return err
	}
	w := newWiring(e.Cfg, e.Getenv, delay, nil)
	if c.CheckConfig {
		return c.check(e, w)
	}
	level, err := c.level(e)
	if err != nil {
		return err
	}
	log := e.newLogger(e.Stderr, &slog.HandlerOptions{Level: level})
	// The packaged binary may hand over to a release in the data
	// directory here (update.go); nothing has been opened yet.
	l, err := e.launch(func(msg string, args ...any) { log.Warn(msg, args...) })
	if err != nil {
		return err
	}
	updateFault("start", e.Data)
	ctx, restart := context.WithCancelCause(ctx)
	defer restart(nil)
	d := &daemon{e: e, cfg: e.Cfg, wire: w, usage: w.usage, tick: tick, demo: c.Demo, fileKeys: fileKeys, flags: c, delay: delay,
		log: log, engines: newDaemonEngines(), trial: l.trial, rolledBack: l.rolledBack, settle: c.Settle, restart: restart,
		restores: make(chan *restoreReq), mem: newMemLimit(e.Cfg.Daemon.MemoryLimit, e.Getenv, log)}
	d.engines.restorer = d
	if l.trial {
		log.Warn("update: this version is on trial", "version", e.Version, "settle", c.Settle)
	}
	err = d.run(ctx)
	if err == nil && errors.Is(context.Cause(ctx), errUpdateRestart) {
		return &ExitError{Code: ExitRestart}
	}
	return err
}

// apply lays the flags over cfg and returns the tick and the demo delay.
func (c *Flags) apply(cfg *config.Config) (tick, delay time.Duration, err error) {
	if c.GPIO != "" {
		if !slices.Contains([]string{config.BackendAuto, config.BackendSim, config.BackendPeriph}, c.GPIO) {
			return 0, 0, usagef("run: --gpio %q is not one of auto, sim, periph", c.GPIO)
		}
		cfg.GPIO.Backend = c.GPIO
	}
	if c.Listen != "" {
		cfg.Daemon.Listen = c.Listen
	}
	tick = cfg.Daemon.Tick.Duration
	if c.Demo {
		tick, delay = demoTick, demoDelay
		cfg.Defaults.Provider = config.ProviderDemo
	}
	if c.Tick != 0 {
		if c.Tick < 0 {
			return 0, 0, usagef("run: --tick %s must be positive", c.Tick)
		}
		tick = c.Tick
	}
	return tick, delay, nil
}

// socketDrain is how long requests in flight may take to finish once the
// daemon has stopped its engine.
const socketDrain = 2 * time.Second

// daemon is one `questbox run`: what it wires together.
type daemon struct {
	e    *Env
	cfg  *config.Config
	wire *wiring
	// usage is what the providers' runs used since the start: every
	// wiring's providers (a reload's too) add to it.
	usage   *usageMeter
	tick    time.Duration
	demo    bool
	log     *slog.Logger
	engines *daemonEngines
	// fileKeys is the config file as read at start-up, before the flags,
	// for SIGHUP to compare with (reload.go); flags are the command
	// line's, which a reload lays over the file again, and delay the
	// demo provider's.
	fileKeys config.Keys
	flags    *Flags
	delay    time.Duration
	// loaded is the configuration in force once a reload applied one
	// (nil: cfg, generation 1, inForce); cfg stays the one read at
	// start-up, which the keys that need a restart keep.
	loaded atomic.Pointer[api.LoadedConfig]

	// mu guards up, wire, appliedKeys, dash and stopMQTT: a reload
	// (reload.go) applies the config to a session only while up, and a
	// session starts and stops its parts holding it.
	mu sync.Mutex
	up bool
	// appliedKeys is the file the latest applied reload read (nil: none
	// since start-up, fileKeys).
	appliedKeys *config.Keys

	dev *device.Device
	box *box.Box
	st  *engine.Store
	eng *engine.Engine
	// local is the API over the running engine for the faces inside the
	// daemon (MQTT, the dashboard's websocket, /metrics, the printer).
	local *api.Server
	sock  *api.SocketServer
	// stopMQTT publishes "offline" and disconnects (mqtt.go).
	stopMQTT func()
	dash     *dashboardRun

	// The update on trial (update.go). trial, settle and rolledBack are
	// set before run; healthySince is set by ready before the tick loop
	// starts, and then, like committed, is the tick loop's alone: a failed
	// tick (no watchdog fed) starts the settling time again.
	trial  bool
	settle time.Duration
	// rolledBack is what a rollback at this start said: the LEDs show
	// it as a fault for as long as this daemon runs.
	rolledBack   string
	healthySince time.Time
	committed    bool
	// restart stops the daemon with a cause (errUpdateRestart); nil in
	// tests that build a daemon by hand.
	restart func(error)
	// restores carries a staged restore from an API handler to the
	// session, which stops its work and returns it for swap.
	restores chan *restoreReq
	// live is the session's engine, for the network probe's goroutine;
	// nil between sessions.
	live atomic.Pointer[engine.Engine]
	// holding is set while the daemon waits for a refused store (hold.go):
	// a restore then swaps the closed file at once.
	holding atomic.Bool
	// mem is the soft memory limit (memlimit.go).
	mem *memLimit
}

// run is the daemon, step by step. It returns when ctx ends (SIGINT,
// SIGTERM) or the LEDs or button fail.
func (d *daemon) run(ctx context.Context) error {
	defer d.wire.close() // last: the engine and its runs have stopped
	defer d.mem.stop()
	defer d.watchReload(ctx)()
	d.warnings()
	// The pins first: a box whose GPIO does not fit its config fails
	// before it takes the store's lock.
	if err := d.openDevice(); err != nil {
		return err
	}
	defer d.dev.Close()
	if d.rolledBack != "" {
		d.box.Notice("update rolled back (see the journal or questbox version)")
	}
	// The LEDs chase from now on, and show a refused store.
	// On an early return (no socket, no store) the LEDs stop too.
	bctx, stopBox := context.WithCancel(ctx)
	g, gctx := errgroup.WithContext(bctx)
	g.Go(func() error { return d.deviceFailed(gctx, d.box.Run(gctx)) })
	// Ends with the LEDs: see text_linux.go.
	g.Go(func() error { unmapTextWhileBusy(gctx, d.commits); return nil })
	defer func() { stopBox(); _ = g.Wait() }()

	if err := d.serveSocket(ctx); err != nil {
		return err
	}
	// By the time this runs the engine has stopped (its runs had the
	// grace period): requests still in flight get a moment to finish, and
	// a client stalled in the middle of its request is cut off.
	defer d.sock.Close(socketDrain)
	updateFault("store", d.e.Data)
	first := true
	for {
		req, err := d.session(gctx, first)
		if err != nil {
			d.engines.set(nil, err) // answers a restore waiting for this session
			return err
		}
		if req == nil {
			break
		}
		first = false
		d.swap(req)
	}
	devErr := g.Wait()
	d.log.Info("stopped")
	return devErr
}

// session is the store and everything over it, from its open to its
// close: the engine, MQTT, the printer, the dashboard, the tick loop. It
// returns when ctx ends (nil) or when a restore was asked (the request,
// with the store closed as at shutdown, for swap).
func (d *daemon) session(ctx context.Context, first bool) (*restoreReq, error) {
	if err := d.openStore(ctx); err != nil {
		return nil, err
	}
	defer d.st.Close()
	if first {
		d.mem.start()
		// Once the data directory exists: on a first start the store's
		// open makes it, and the probe's hidden mounts cover only what
		// exists (a run's cover what exists then).
		logConfinement(ctx, d.log, d.wire.launcher, d.wire.confineErr)
	}
	// Its parts start on the config in force, and a reload waits for
	// them (reload.go).
	d.mu.Lock()
	cfg := d.current()
	if err := d.startEngine(cfg); err != nil {
		d.mu.Unlock()
		return nil, err
	}
	d.startMQTT(cfg)
	pr, err := startPrinter(d.e.Stdout, d.e.FormatEvent, d.local)
	if err != nil {
		d.mu.Unlock()
		return nil, err
	}
	if d.demo && first {
		if err := seedDemo(d.e.Stdout, d.eng, cfg); err != nil {
			d.log.Error("could not seed the demo quest", "err", err)
		}
	}
	d.serveDashboard(cfg)
	d.up = true
	d.mu.Unlock()
	// Stopped after the engine: the pages see its last events. A reload
	// may have started another one since.
	defer func() {
		d.mu.Lock()
		dash := d.dash
		d.mu.Unlock()
		dash.stop()
	}()
	updateFault("ready", d.e.Data)
	d.ready()
	updateFault("after-ready", d.e.Data)

	// Serve returns when ctx ends (the device failed, SIGTERM) or a
	// restore is asked.
	sctx, cancel := context.WithCancel(ctx)
	got := make(chan *restoreReq, 1)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case r := <-d.restores:
			got <- r
			cancel()
		case <-sctx.Done():
		}
	}()
	stopBackups := d.scheduleBackups(sctx)
	_ = d.eng.Serve(sctx, d.tick, d.tickDone)
	cancel()
	<-watched
	stopBackups()
	var req *restoreReq
	select {
	case req = <-got:
	default:
	}
	if req != nil && ctx.Err() != nil {
		req.staged.Discard()
		req.done <- restoreResult{err: errStopping}
		req = nil
	}
	if req != nil {
		d.log.Info("restoring a backup: stopping work as at shutdown", "backup", req.name)
		d.engines.set(nil, errRestoring)
	}
	d.stop()
	pr.stop()
	return req, nil
}

// warnings logs what the configuration lets run but may not work.
func (d *daemon) warnings() {
	w, log := d.wire, d.log
	for _, name := range slices.Sorted(maps.Keys(w.problems)) {
		log.Warn("provider cannot run yet; quests on it stop with this message", "provider", name, "err", w.problems[name])
	}
	for _, name := range slices.Sorted(maps.Keys(w.warnings)) {
		log.Warn("provider may not work", "provider", name, "err", w.warnings[name])
	}
	for _, msg := range d.cfg.Warnings() {
		log.Warn(msg)
	}
	if ws, err := strconv.ParseInt(d.e.Getenv("WATCHDOG_USEC"), 10, 64); err == nil && ws > 0 && d.tick > time.Duration(ws)*time.Microsecond/2 {
		log.Warn("the watchdog is fed after each tick that works, but the tick is longer than half of WatchdogSec: systemd will restart the daemon; raise WatchdogSec or shorten daemon.tick",
			"tick", d.tick, "watchdog", time.Duration(ws)*time.Microsecond)
	}
}

func (d *daemon) openDevice() error {
	dev, err := OpenDevice(d.cfg.GPIO, d.log)
	if err != nil {
		return err
	}
	d.dev = dev
	opt := box.Options{ButtonPin: buttonPin(d.cfg.GPIO.Button), Log: d.log}
	if mirrorOnACT(d.cfg.GPIO, dev.Backend()) {
		opt.ACT = device.NewACT(device.DefaultACTPath, nil, d.log)
	}
	d.box = box.New(dev, opt)
	return nil
}

// deviceFailed turns a failure of the LEDs or the button (a pin that
// cannot be driven) into the daemon's error: it stops the daemon.
func (d *daemon) deviceFailed(ctx context.Context, err error) error {
	if err == nil || ctx.Err() != nil {
		return nil
	}
	d.log.Error("the LEDs or the button failed; stopping", "err", err)
	return &ExitError{Code: api.ExitStore, Err: err}
}

// serveSocket serves the API on the control socket: commands get "the
// daemon is starting" until the engine runs, and the reason while the
// store is refused.
func (d *daemon) serveSocket(ctx context.Context) error {
	ln, err := api.ListenSocket(d.cfg.SocketPath())
	if err != nil {
		return &ExitError{Code: api.ExitStore, Err: err}
	}
	srv := api.New(api.Options{Engines: d.engines, Config: d.cfg, Loaded: d.inForce, Box: d.box, Version: d.e.Version, Log: d.log, Internal: true})
	d.sock = api.ServeSocket(context.WithoutCancel(ctx), ln, srv, api.SocketConfig{Policy: api.DefaultPeerPolicy(), Log: d.log})
	return nil
}

// openStore opens the store with its full check. A damaged store (or one
// from a newer questbox) needs a person: the daemon waits for the repair
// with the fault on the LEDs, instead of exiting with them dark.
func (d *daemon) openStore(ctx context.Context) error {
	defer d.mem.lift()()
	var st *engine.Store
	err := d.e.stepTimer(d.log.Info).run("opening the store (its check, a compaction or a migration)", d.e.storeSize(), func() (err error) {
		st, err = engine.OpenStore(d.e.Data, engine.StoreOptions{Check: true, Compact: true})
		return err
	})
	if err != nil && holdable(err) {
		st, err = d.hold(ctx, err)
	}
	if err != nil {
		return err
	}
	// What the open found or did (a repaired meta page, a compaction).
	for _, n := range st.Notes() {
		d.log.Info("store: " + n)
	}
	d.st = st
	return nil
}

// startEngine starts the session's engine on cfg; d.mu is held.
func (d *daemon) startEngine(cfg *config.Config) error {
	opt, err := d.wire.options(cfg, d.log, d.st, nil)
	if err != nil {
		return err
	}
	eng, err := engine.New(d.st, opt)
	if err != nil {
		return err
	}
	first := d.eng == nil
	d.eng = eng
	d.local = api.New(d.localAPI())
	if first {
		// Once per process; a session after a restore records to its
		// own engine through d.engines.
		d.wire.net.recordTo(d.live.Load, d.log)
		d.wire.net.onChange(d.box.SetOnline)
	}
	d.live.Store(eng)
	d.box.Attach(eng)
	return nil
}

// localAPI is the API over the running engine for the faces inside the
// daemon: it stays open from the engine's start to its stop, while the
// doors (the socket, the dashboard) open only once the daemon is ready.
func (d *daemon) localAPI() api.Options {
	return api.Options{Engines: api.Only(d.eng), Config: d.cfg, Loaded: d.inForce, Box: d.box, Version: d.e.Version, Log: d.log, Internal: true}
}

// ready opens the API to commands (they waited while the daemon started)
// and tells systemd.
func (d *daemon) ready() {
	d.engines.set(d.eng, nil)
	d.log.Info("questbox is running", "version", d.e.Version, "data", d.e.Data, "socket", d.cfg.SocketPath(), "tick", d.tick,
		"providers", d.wire.providerNames(), "demo", d.demo, "gpio", d.dev.Backend())
	d.healthySince = time.Now()
	d.notify("READY=1")
	d.box.SetReady()
	d.trialReady()
	if kb, err := releaseText(); err != nil {
		d.log.Warn("could not release the start-up's pages of the binary", "err", err)
	} else {
		d.log.Debug("released the start-up's pages of the binary", "KiB", kb)
	}
}

// commits is the live store's count of commits (0 between sessions).
func (d *daemon) commits() uint64 {
	if e := d.live.Load(); e != nil {
		return e.Store().Commits()
	}
	return 0
}

// stop is the shutdown after Serve returned: no more dispatches, runs in
// flight get the grace period, unfinished nodes go back to pending.
func (d *daemon) stop() {
	d.log.Info("stopping: no more dispatches; runs in flight may finish", "grace", d.cfg.Daemon.Grace.Duration)
	if d.engines.restoring() {
		d.notify("RELOADING=1")
	} else {
		d.notify("STOPPING=1")
		d.engines.set(nil, errStopping)
	}
	d.live.Store(nil)
	// No reload applies to this session from now on.
	d.mu.Lock()
	d.up = false
	stopMQTT := d.stopMQTT
	d.mu.Unlock()
	d.eng.Shutdown(d.cfg.Daemon.Grace.Duration)
	stopMQTT()
}

// tickDone is Serve's onTick: the LEDs show the tick's outcome, and
// systemd's watchdog is fed only after a tick that worked. One failed tick
// is a fault on the LEDs; a tick loop that keeps failing (the store cannot
// be written) or hangs stops feeding it, and systemd restarts the daemon,
// which checks the store again as it opens it.
func (d *daemon) tickDone(rep engine.TickReport, err error) {
	d.box.Ticked(err)
	d.mu.Lock()
	dash := d.dash
	d.mu.Unlock()
	dash.ticked(rep, err)
	if err == nil {
		d.notify("WATCHDOG=1")
		d.trialCommit()
	} else {
		d.healthySince = time.Now()
	}
}

func (d *daemon) notify(state string) {
	if err := sdNotify(d.e.Getenv, state); err != nil {
		d.log.Warn("systemd notify failed", "state", state, "err", err)
	}
}

// check is `run --check-config`: the file has been loaded and validated;
// this also checks that each provider can run (executables on PATH, API
// key variables set).
func (c *Flags) check(e *Env, w *wiring) error {
	src := source(e.Cfg)
	for _, name := range slices.Sorted(maps.Keys(w.warnings)) {
		fmt.Fprintf(e.Stderr, "warning: %s: providers.%s: %v\n", src, name, e.Redact.Error(w.warnings[name]))
	}
	for _, msg := range e.Cfg.Warnings() {
		fmt.Fprintf(e.Stderr, "warning: %s: %s\n", src, msg)
	}
	if errs := configProblems(e.Cfg, w, e.Version, true); len(errs) > 0 {
		return &ExitError{Code: api.ExitUsage, Err: errors.Join(errs...)}
	}
	judged := "no L2 judge"
	if j := e.Cfg.Judge; j != nil {
		judged = fmt.Sprintf("judge %s/%s then %s/%s", j.Light.Provider, j.Light.Model, j.Heavy.Provider, j.Heavy.Model)
	}
	probe := "no network probe (always online)"
	if e.Cfg.Network.Probe != "" {
		probe = "network probe " + e.Cfg.Network.Probe
	}
	fmt.Fprintf(e.Stdout, "config ok: %s\ndata %s, socket %s, tick %s, providers %s\ngate profiles %s (new quests: %s), %s, %s\n",
		src, e.Data, e.Cfg.SocketPath(), e.Cfg.Daemon.Tick, w.providerNames(),
		strings.Join(e.Cfg.GateNames(), ", "), e.Cfg.Defaults.Gate, judged, probe)
	return nil
}

// seedDemo creates the demo quest on a store that has no quests yet. Its
// every role runs on the demo provider, whatever providers cfg gives
// roles: the demo sends nothing anywhere.
//
// It is a v3.2 quest (docs/design.md, "The demo") that shows, at the 5s tick
// (each step's follow-up work dispatched as its result commits):
//   - Teams (planner, executer, accepter): the root Team is rejected once
//     and revised (a rejects_to edge) after the first tick;
//   - a council of 1 reviewer and 2 judges on the owner's turns: the
//     reviewer dissents about a proposal the judges promote (a
//     council-dissent fact on the owner) after the second;
//   - one consent: the revised "reproduce it in a small experiment" Team
//     delivers a conclusion that cites nothing, so L1 says REVIEW and its
//     accept waits for the (virtual) button, after the third; the other
//     Teams keep running meanwhile.
//
// TestDemoShowsCouncilTeamsAndButton counts those ticks.
func seedDemo(w io.Writer, eng *engine.Engine, cfg *config.Config) error {
	qs, err := eng.Quests()
	if err != nil || len(qs) > 0 {
		return err
	}
	s := eng.DemoQuestSpec()
	demoRoles := []string{engine.RolePlanner, engine.RoleExecuter, engine.RoleAccepter, engine.RoleReviewer, engine.RoleJudge}
	for role, r := range cfg.Roles {
		if r.Provider != "" && (slices.Contains(s.Roles, role) || slices.Contains(demoRoles, role)) {
			if s.RoleProviders == nil {
				s.RoleProviders = map[string]string{}
			}
			s.RoleProviders[role] = engine.ProviderDemo
		}
	}
	q, err := eng.NewQuest(s)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "[demo] seeded demo quest %s %q (mode team with Teams and a council of 1 reviewer and 2 judges, provider demo: canned answers, no real agent)\n", q.ID, q.Name)
	fmt.Fprintf(w, "[demo] watch for: a Team rejected once and revised, a reviewer's dissent, and one accept that waits for the button: press it with `questbox device press --hold 2s` or the dashboard's button\n")
	return nil
}

// printer prints events as they are committed. It reads them through the
// API's event watch, so it never slows the engine down.
type printer struct {
	w      io.Writer
	format func(api.Event) string // one event's line, without its newline
	api    *api.Server
	next   uint64 // last seq printed
	// buf is a page's lines, reused from page to page: a busy tick
	// prints thousands of events, 64 a page.
	buf []byte

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// startPrinter prints the events that local's engine commits from now on;
// stop ends it after printing what the shutdown committed.
func startPrinter(w io.Writer, format func(api.Event) string, local *api.Server) (*printer, error) {
	ctx, cancel := context.WithCancel(context.Background())
	wa, err := local.Watch(ctx, api.FromNewest)
	if err != nil {
		cancel()
		return nil, err
	}
	p := &printer{w: w, format: format, api: local, next: wa.Last(), cancel: cancel}
	p.wg.Go(func() { p.loop(ctx, wa) })
	return p, nil
}

func (p *printer) stop() {
	p.cancel()
	p.wg.Wait()
	p.drain()
}

func (p *printer) loop(ctx context.Context, wa *api.Watch) {
	defer wa.Close()
	for {
		b, err := wa.Next(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			fmt.Fprintf(p.w, "(event stream failed: %v)\n", err)
			return
		}
		if b.Skipped {
			p.next = b.Next
			fmt.Fprintf(p.w, "(events were pruned before they were printed; continuing at %d)\n", p.next)
			continue
		}
		p.print(b.Events)
	}
}

func (p *printer) print(evs []api.Event) {
	b := p.buf[:0]
	for _, ev := range evs {
		b = append(b, p.format(ev)...)
		b = append(b, '\n')
		p.next = ev.Seq
	}
	p.w.Write(b)
	p.buf = b
}

// drain prints what the shutdown committed after the loop stopped.
func (p *printer) drain() {
	for {
		b, err := p.api.ReadEvents(context.Background(), p.next, 0)
		if err != nil || b.Skipped || len(b.Events) == 0 {
			return
		}
		p.print(b.Events)
	}
}
