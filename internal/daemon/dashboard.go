package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/internal/config"
	"github.com/questbox/questbox/ui/api"
	"github.com/questbox/questbox/ui/dashboard"
	"github.com/questbox/questbox/ui/metrics"
	"github.com/questbox/questbox/ui/mqtt"
)

// dashboardRun is the dashboard of a running daemon.
type dashboardRun struct {
	metrics *metrics.Metrics // nil without a dashboard
	stop    func()           // stops serving and waits (never nil)
}

// ticked feeds a tick to the metrics.
func (r *dashboardRun) ticked(rep engine.TickReport, err error) {
	if r != nil && r.metrics != nil {
		r.metrics.ObserveTick(rep.Took, err)
	}
}

// serveDashboard serves the dashboard, its API and /metrics on
// daemon.listen, once the engine runs. A dashboard that cannot start (the
// port is taken) is logged and the daemon runs on without it: the quests,
// the LEDs and the button do not depend on it.
//
// It serves cfg, the config in force; d.mu is held.
func (d *daemon) serveDashboard(cfg *config.Config) {
	d.dash = &dashboardRun{stop: func() {}}
	if !cfg.Dashboard.Enabled {
		d.log.Info("dashboard disabled (dashboard.enabled = false)")
		return
	}
	pwfile := cfg.DashboardPasswordFile()
	first := cfg.DashboardFirstPasswordFile()
	ens, err := dashboard.EnsurePassword(pwfile, first)
	if err != nil {
		d.log.Error("dashboard not started: no password file", "file", pwfile, "err", err)
		return
	}
	// The password itself never reaches the log: an agent may read the
	// daemon's output (its terminal, the journal).
	if ens.Generated {
		d.log.Warn("dashboard password generated; only the daemon's user can read it: cat "+first+" (`questbox password` sets a new one)",
			"file", first)
	}
	if ens.Tightened != 0 {
		d.log.Warn("dashboard password file was readable by others: made 0600; its session key may have been read, `questbox password` makes a new one",
			"file", pwfile, "mode", fmt.Sprintf("%04o", ens.Tightened))
	}
	eng, st := d.eng, d.st
	m := metrics.New(metrics.Sources{
		Summary: func() (api.Summary, error) { return d.local.Summary(context.Background()) },
		OutboxDepth: func() uint64 {
			if !d.current().MQTT.Enabled() {
				return 0
			}
			return eng.LastSeq() - min(eng.LastSeq(), eng.Cursor(mqtt.Consumer))
		},
		StorePath:  st.Path(),
		AgentUsage: d.usage.Usage,
		Commits:    st.Commits,
		MQTTConnected: func() (configured, connected bool) {
			s, _ := d.box.Status()
			return s.Broker.Configured, s.Broker.Connected
		},
	})
	srv, err := dashboard.New(dashboard.Options{
		API:    api.Options{Engines: d.engines, Config: cfg, Loaded: d.inForce, Box: d.box, Version: d.e.Version, Log: d.log, Update: daemonUpdater{d}},
		Events: d.local, Config: cfg.Dashboard, PasswordFile: pwfile, Metrics: m, Log: d.log})
	if err != nil {
		d.log.Error("dashboard not started", "err", err)
		return
	}
	ln, err := net.Listen("tcp", cfg.Daemon.Listen)
	if err != nil {
		d.log.Error("dashboard not started: cannot listen; set daemon.listen or run --listen", "listen", cfg.Daemon.Listen, "err", err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ctx, ln); err != nil && !errors.Is(err, net.ErrClosed) {
			d.log.Error("dashboard stopped", "err", err)
		}
	}()
	d.dash.metrics = m
	d.dash.stop = func() { cancel(); <-done }
	url := localURL(ln.Addr())
	read := "log in with the dashboard password"
	if cfg.Dashboard.Read == config.ReadPublic {
		read = "reading is public; changes need the dashboard password"
	}
	fmt.Fprintf(d.e.Stdout, "dashboard: %s (%s; metrics on %smetrics)\n", url, read, url)
	d.log.Info("dashboard listening", "url", url, "read", cfg.Dashboard.Read, "consent", cfg.Dashboard.Consent)
}

// localURL is how to open the dashboard from this box: an address
// that listens everywhere is shown as the loopback one.
func localURL(a net.Addr) string {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return "http://" + a.String() + "/"
	}
	host := ta.IP.String()
	switch {
	case ta.IP.IsUnspecified() && ta.IP.To4() != nil:
		host = "127.0.0.1"
	case ta.IP.IsUnspecified():
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(ta.Port)) + "/"
}
