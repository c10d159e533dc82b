package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/questbox/questbox/config"
	"github.com/questbox/questbox/engine"
)

// Demo settings used by `run --demo` (and so by `make run`).
const (
	demoTick  = 5 * time.Second
	demoDelay = 2 * time.Second // long enough to see the running LED
	demoName  = "demo: Japanese invoice OCR"
	demoDir   = "find the most accurate free OCR for Japanese invoices"
)

// runCmd is `run`: the daemon.
type runCmd struct {
	tick        time.Duration
	gpio        string
	listen      string
	demo        bool
	checkConfig bool
}

func (c *runCmd) flags(fs *flag.FlagSet) {
	fs.DurationVar(&c.tick, "tick", 0, "tick period (default: the config's daemon.tick; 5s with --demo)")
	fs.StringVar(&c.gpio, "gpio", "", "GPIO backend: auto, sim or periph (default: the config's gpio.backend)")
	fs.StringVar(&c.listen, "listen", "", "dashboard address host:port (default: the config's daemon.listen)")
	fs.BoolVar(&c.demo, "demo", false, "demo mode: the demo provider, a 5s tick, and a demo quest on first start")
	fs.BoolVar(&c.checkConfig, "check-config", false, "validate the configuration and the providers, then exit")
}

func (c *runCmd) run(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("run", args); err != nil {
		return err
	}
	cfg := e.cfg
	if c.gpio != "" {
		if !slices.Contains([]string{config.BackendAuto, config.BackendSim, config.BackendPeriph}, c.gpio) {
			return usagef("run: --gpio %q is not one of auto, sim, periph", c.gpio)
		}
		cfg.GPIO.Backend = c.gpio
	}
	if c.listen != "" {
		cfg.Daemon.Listen = c.listen
	}
	tick := cfg.Daemon.Tick.Duration
	delay := time.Duration(0)
	if c.demo {
		tick, delay = demoTick, demoDelay
		cfg.Defaults.Provider = config.ProviderDemo
	}
	if c.tick != 0 {
		if c.tick < 0 {
			return usagef("run: --tick %s must be positive", c.tick)
		}
		tick = c.tick
	}
	w := newWiring(cfg, e.getenv, delay)
	if c.checkConfig {
		return c.check(e, w)
	}
	log := slog.New(slog.NewTextHandler(e.stderr, nil))
	for _, name := range slices.Sorted(maps.Keys(w.problems)) {
		log.Warn("provider cannot run yet; quests on it stop with this message", "provider", name, "err", w.problems[name])
	}
	for _, name := range slices.Sorted(maps.Keys(w.warnings)) {
		log.Warn("provider may not work", "provider", name, "err", w.warnings[name])
	}
	if ws, err := strconv.ParseInt(e.getenv("WATCHDOG_USEC"), 10, 64); err == nil && ws > 0 && tick > time.Duration(ws)*time.Microsecond/2 {
		log.Warn("the watchdog is fed after each tick that works, but the tick is longer than half of WatchdogSec: systemd will restart the daemon; raise WatchdogSec or shorten daemon.tick",
			"tick", tick, "watchdog", time.Duration(ws)*time.Microsecond)
	}

	// The pins first: a box whose GPIO does not fit its config fails
	// before it takes the store's lock.
	dev, err := openDevice(cfg.GPIO, log)
	if err != nil {
		return err
	}
	defer dev.Close()
	st, err := engine.OpenStore(e.data, engine.StoreOptions{Check: true})
	if err != nil && holdable(err) {
		// A damaged store needs a person: wait for the repair with the
		// fault on the LEDs instead of exiting with them dark.
		ln, lerr := listenControl(ctx, cfg.SocketPath())
		if lerr != nil {
			log.Warn("no control socket while waiting for the store", "err", lerr)
		}
		hold := newStoreHold(cfg.GPIO, e.data, dev, log, err)
		hold.notify = func(state string) {
			if err := sdNotify(e.getenv, state); err != nil {
				log.Warn("systemd notify failed", "err", err)
			}
		}
		hold.watchdog = e.getenv("WATCHDOG_USEC") != ""
		st, err = hold.wait(ctx, ln)
	}
	if err != nil {
		return err
	}
	defer st.Close()
	opt, err := w.options(cfg, log, st)
	if err != nil {
		return err
	}
	eng, err := engine.New(st, opt)
	if err != nil {
		return err
	}
	w.net.recordTo(eng, log)
	ln, err := listenControl(ctx, cfg.SocketPath())
	if err != nil {
		eng.Shutdown(0)
		return err
	}
	bx := newBox(cfg.GPIO, dev, eng, log)
	w.net.onChange(bx.setOnline)
	e.eng, e.wire, e.log, e.box = eng, w, log, bx

	// The device runs until the daemon starts stopping; a device that
	// fails (a pin that cannot be configured) stops the daemon too. The
	// LEDs go dark as soon as stopping begins: a stopping daemon must not
	// look healthy.
	g, gctx := errgroup.WithContext(ctx)
	bx.start(gctx, g)

	// Print node and verdict events readably on stdout; seeding the demo
	// quest below is the first thing it shows.
	pctx, stopPrinter := context.WithCancel(context.Background())
	pr := &printer{w: e.stdout, eng: eng, next: eng.LastSeq()}
	var pwg sync.WaitGroup
	pwg.Go(func() { pr.loop(pctx) })

	if c.demo {
		if err := seedDemo(e); err != nil {
			log.Error("could not seed the demo quest", "err", err)
		}
	}

	srv := newControlServer(context.WithoutCancel(ctx), ln, log, e.handler())
	log.Info("questbox is running", "version", version, "data", e.data, "socket", cfg.SocketPath(), "tick", tick,
		"providers", w.providerNames(), "demo", c.demo, "gpio", dev.Backend())
	if err := sdNotify(e.getenv, "READY=1"); err != nil {
		log.Warn("systemd notify failed", "err", err)
	}
	bx.setReady()

	// Serve returns when ctx ends (SIGINT, SIGTERM) or the device failed.
	_ = eng.Serve(gctx, tick, tickDone(bx, e.getenv, log))
	devErr := g.Wait()
	if devErr != nil {
		log.Error("the LEDs or the button failed; stopping", "err", devErr)
	}

	log.Info("stopping: no more dispatches; runs in flight may finish", "grace", cfg.Daemon.Grace.Duration)
	_ = sdNotify(e.getenv, "STOPPING=1")
	srv.close()
	eng.Shutdown(cfg.Daemon.Grace.Duration)
	srv.wait()
	stopPrinter()
	pwg.Wait()
	pr.drain()
	log.Info("stopped")
	return devErr
}

// tickDone is Serve's onTick: the LEDs show the tick's outcome, and
// systemd's watchdog is fed only after a tick that worked. One failed tick
// is a fault on the LEDs; a tick loop that keeps failing (the store cannot
// be written) or hangs stops feeding it, and systemd restarts the daemon,
// which checks the store again as it opens it.
func tickDone(bx *box, getenv func(string) string, log *slog.Logger) func(engine.TickReport, error) {
	return func(_ engine.TickReport, err error) {
		bx.ticked(err)
		if err != nil {
			return
		}
		if err := sdNotify(getenv, "WATCHDOG=1"); err != nil {
			log.Warn("systemd watchdog notify failed", "err", err)
		}
	}
}

// check is `run --check-config`: the file has been loaded and validated;
// this also checks that each provider can run (executables on PATH, API
// key variables set).
func (c *runCmd) check(e *env, w *wiring) error {
	src := e.cfg.Path
	if src == "" {
		src = "built-in defaults (no config file)"
	}
	for _, name := range slices.Sorted(maps.Keys(w.warnings)) {
		fmt.Fprintf(e.stderr, "warning: %s: providers.%s: %v\n", src, name, w.warnings[name])
	}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(w.problems)) {
		errs = append(errs, fmt.Errorf("%s: providers.%s: %v", src, name, w.problems[name]))
	}
	if w.judgeErr != nil {
		errs = append(errs, fmt.Errorf("%s: %v", src, w.judgeErr))
	}
	if len(errs) > 0 {
		return &exitError{code: exitUsage, err: errors.Join(errs...)}
	}
	judged := "no L2 judge"
	if j := e.cfg.Judge; j != nil {
		judged = fmt.Sprintf("judge %s/%s then %s/%s", j.Light.Provider, j.Light.Model, j.Heavy.Provider, j.Heavy.Model)
	}
	probe := "no network probe (always online)"
	if e.cfg.Network.Probe != "" {
		probe = "network probe " + e.cfg.Network.Probe
	}
	fmt.Fprintf(e.stdout, "config ok: %s\ndata %s, socket %s, tick %s, providers %s\ngate profiles %s (new quests: %s), %s, %s\n",
		src, e.data, e.cfg.SocketPath(), e.cfg.Daemon.Tick, w.providerNames(),
		strings.Join(e.cfg.GateNames(), ", "), e.cfg.Defaults.Gate, judged, probe)
	return nil
}

// handler runs forwarded CLI requests against the daemon's engine with the
// same verb code as the CLI, capturing what they print.
func (e *env) handler() func(context.Context, request) response {
	return func(ctx context.Context, req request) (resp response) {
		var out, errb bytes.Buffer
		defer func() {
			if p := recover(); p != nil {
				e.log.Error("BUG: forwarded command panicked", "args", req.Args, "panic", p)
				resp = response{Stdout: out.Bytes(), Stderr: fmt.Appendf(errb.Bytes(), "questbox: BUG: the daemon failed on this command: %v\n", p), Code: exitUsage}
			}
		}()
		h := &env{stdin: bytes.NewReader(req.Stdin), stdout: &out, stderr: &errb, getenv: e.getenv, cwd: req.Cwd,
			cfg: e.cfg, data: e.data, log: e.log, eng: e.eng, wire: e.wire, box: e.box, inDaemon: true}
		code := report(&errb, h.exec(ctx, req.Args))
		return response{Stdout: out.Bytes(), Stderr: errb.Bytes(), Code: code}
	}
}

// seedDemo creates the demo quest on a store that has no quests yet.
func seedDemo(e *env) error {
	qs, err := e.eng.Quests()
	if err != nil || len(qs) > 0 {
		return err
	}
	s := e.eng.NewQuestSpec(demoName, demoDir)
	s.Mode, s.Provider = engine.ModeTeam, "demo"
	q, err := e.eng.NewQuest(s)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "[demo] seeded demo quest %s %q (mode team, provider demo: canned answers, no real agent)\n", q.ID, q.Name)
	return nil
}

// printer prints events as they are committed. It reads them from the
// outbox through a subscription, so it never slows the engine down.
type printer struct {
	w    io.Writer
	eng  *engine.Engine
	next uint64 // last seq printed
}

func (p *printer) loop(ctx context.Context) {
	sub := p.eng.Subscribe(p.next)
	defer func() { sub.Close() }()
	for {
		evs, err := sub.Next(ctx)
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, engine.ErrEventsPruned) {
			sub.Close()
			p.next = p.eng.LastSeq()
			fmt.Fprintf(p.w, "(events were pruned before they were printed; continuing at %d)\n", p.next)
			sub = p.eng.Subscribe(p.next)
			continue
		}
		if err != nil {
			fmt.Fprintf(p.w, "(event stream failed: %v)\n", err)
			return
		}
		p.print(evs)
	}
}

func (p *printer) print(evs []engine.Event) {
	var b strings.Builder
	for _, ev := range evs {
		b.WriteString(formatEvent(ev))
		b.WriteByte('\n')
		p.next = ev.Seq
	}
	io.WriteString(p.w, b.String())
}

// drain prints what the shutdown committed after the loop stopped.
func (p *printer) drain() {
	for {
		evs, err := p.eng.Events(p.next, 0)
		if err != nil || len(evs) == 0 {
			return
		}
		p.print(evs)
	}
}
