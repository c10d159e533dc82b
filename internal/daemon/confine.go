package daemon

// The confinement of agents: which paths no agent may reach, and the
// launcher that starts every command agent, command judge and program
// rule confined (internal/confine, docs/privacy.md).

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/questbox/questbox/internal/config"
	"github.com/questbox/questbox/internal/confine"
)

// hiddenPaths are the paths no agent may read, list, write or connect
// to: the data directory (the store, the run logs, the dashboard's
// password file, staged releases), the config file, the release key, the
// control socket, and the secret files the config names.
func hiddenPaths(cfg *config.Config) []string {
	paths := []string{cfg.Daemon.Data, releaseKey(cfg), cfg.SocketPath(), cfg.DashboardPasswordFile()}
	if cfg.Path != "" {
		paths = append(paths, cfg.Path)
	}
	for _, f := range []string{cfg.MQTT.PasswordFile, cfg.MQTT.KeyFile} {
		if f != "" {
			paths = append(paths, f)
		}
	}
	for i, p := range paths {
		if !filepath.IsAbs(p) {
			if a, err := filepath.Abs(p); err == nil {
				paths[i] = a
			}
		}
	}
	return paths
}

// newLauncher is the launcher of cfg's agents: questbox-confine beside
// this binary, or, when that is missing or of another build, this binary
// itself, started with the launcher's verb (main calls confine.Main
// first); the start-up report says which. The runs'
// temporary and scratch directories are the data directory's own, in
// os.TempDir(): two boxes on one machine (or two tests) never share a
// quest's scratch directory.
func newLauncher(cfg *config.Config) (*confine.Launcher, error) {
	sum := sha256.Sum256([]byte(cfg.Daemon.Data))
	runs := filepath.Join(os.TempDir(), fmt.Sprintf("questbox-runs-%d-%x", os.Geteuid(), sum[:6]))
	return confine.New(confine.Config{Hidden: hiddenPaths(cfg), Runs: runs})
}

// checkWritable says why a provider's runs may not write one of dirs:
// one holds or lies in a hidden path.
func checkWritable(l *confine.Launcher, dirs []string) error {
	for _, d := range dirs {
		if err := l.CheckWritable(d); err != nil {
			return err
		}
	}
	return nil
}

// confineProgram is ground.Exec's Confine: a program rule runs the
// agent's answer through a program, so it runs confined too, writing
// only its temporary directory, with no network.
func confineProgram(l *confine.Launcher) func(*exec.Cmd) (func(), error) {
	return func(cmd *exec.Cmd) (func(), error) { return l.Confine(cmd, confine.Run{}) }
}

// logConfinement says once, at start, what confinement the agents get:
// one warning naming every layer the kernel or the service manager
// refused, and why, or one info line.
func logConfinement(ctx context.Context, log *slog.Logger, l *confine.Launcher, err error) {
	if err != nil {
		log.Warn("agents cannot be confined, so command agents, command judges and program rules do not run", "err", err)
		return
	}
	r := l.Probe(ctx)
	if missing := r.Missing(); len(missing) > 0 {
		names := make([]string, len(missing))
		for i, s := range missing {
			names[i] = s.String()
		}
		log.Warn("agents run with less confinement than they could: see docs/privacy.md", "not_applied", strings.Join(names, "; "), "report", r.String())
		return
	}
	log.Info("agents run confined", "report", r.String())
}

// ConfinementLine is what `questbox selftest` says of the confinement
// agents get here: "confinement: applied: …; NOT applied: …". Its probe
// has a runs' directory of its own, removed after it, so that it never
// touches a running daemon's.
func ConfinementLine(ctx context.Context, cfg *config.Config) string {
	runs, err := os.MkdirTemp("", "questbox-selftest-")
	if err == nil {
		var l *confine.Launcher
		if l, err = confine.New(confine.Config{Hidden: hiddenPaths(cfg), Runs: runs}); err == nil {
			defer l.Close()
			return "confinement: " + l.Probe(ctx).String()
		}
		os.RemoveAll(runs)
	}
	return "confinement: cannot be set up, so no command agent runs: " + err.Error()
}
