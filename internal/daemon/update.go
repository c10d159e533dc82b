package daemon

// The daemon's side of `questbox update FILE|URL`: a signed release is
// checked (release.Check), staged in the data directory (package update)
// and the daemon is asked to restart into it (SIGHUP; it exits with ExitRestart, which the unit's
// RestartForceExitStatus restarts). The start-up of the packaged binary
// (launch) runs the trial, and the daemon commits it once it has been
// READY and fed the watchdog for the settling time (trialCommit).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/internal/config"
	"github.com/questbox/questbox/internal/release"
	"github.com/questbox/questbox/internal/update"
	"github.com/questbox/questbox/ui/api"
)

const (
	// ExitRestart is the daemon's exit status when it stops to start a
	// staged release: the unit restarts it (RestartForceExitStatus) and
	// does not call it a failure (SuccessExitStatus).
	ExitRestart = 75
	// launchedEnv is set by the packaged binary when it executes a
	// release from the data directory in its place: its value is the
	// packaged version, and the release does not launch again.
	launchedEnv = "QUESTBOX_LAUNCHED"
	// rolledBackEnv carries what a rollback said across the exec into the
	// committed release, which shows it on the LEDs.
	rolledBackEnv = "QUESTBOX_ROLLED_BACK"
	// DefaultSettle is how long a release on trial must be READY and
	// feeding the watchdog before it is committed.
	DefaultSettle = 2 * time.Minute
)

// errUpdateRestart is the cause of the daemon's stop when it restarts
// into a staged release.
var errUpdateRestart = errors.New("restarting into a staged release")

// PackagedVersion is the version of the packaged binary: this one, unless
// it was launched by the packaged binary in its place.
func (e *Env) PackagedVersion() string {
	if v := e.Getenv(launchedEnv); v != "" {
		return v
	}
	return e.Version
}

// UpdateDir is the data directory's releases and update state.
func (e *Env) UpdateDir() (*update.Dir, error) {
	return update.Open(e.Data, filepath.Join(e.Data, engine.StoreFile), e.PackagedVersion(), engine.SnapshotStore)
}

// launched is what launch decided for the binary that runs.
type launched struct {
	trial      bool   // this start is a trial of the running version
	rolledBack string // what a rollback at this start said, or ""
}

// launch is the first thing `run` does in the packaged binary: it decides
// which binary runs (update.Dir.Launch) and, when it is another, executes
// it in place of this process; it returns only when this binary runs.
func (e *Env) launch(log func(msg string, args ...any)) (launched, error) {
	d, err := e.UpdateDir()
	if err != nil {
		return launched{}, err
	}
	if e.Getenv(launchedEnv) != "" {
		// Launched by the packaged binary: Launch has run already.
		s, err := d.State()
		if err != nil {
			return launched{}, err
		}
		return launched{trial: s.Trial != nil && s.Trial.Version == e.Version && s.Trial.Starts > 0,
			rolledBack: e.Getenv(rolledBackEnv)}, nil
	}
	var dec update.Decision
	err = e.stepTimer(log).run("the update's store snapshot or rollback", e.storeSize(), func() (err error) {
		dec, err = d.Launch()
		return err
	})
	if err != nil {
		// The packaged binary runs: a box whose update state cannot be
		// read or written must still start.
		log("update: the update state cannot be used; running the packaged binary", "err", err)
		return launched{}, nil
	}
	if dec.Said != "" {
		log(dec.Said)
	}
	l := launched{trial: dec.Trial}
	if dec.RolledBack {
		l.rolledBack = dec.Said
	}
	if dec.Exec == "" {
		return l, nil
	}
	env := append(os.Environ(), launchedEnv+"="+e.Version)
	if l.rolledBack != "" {
		env = append(env, rolledBackEnv+"="+l.rolledBack)
	}
	err = syscall.Exec(dec.Exec, append([]string{dec.Exec}, os.Args[1:]...), env)
	// Exec returned: the binary cannot run here. A trial's start failed
	// (the unit restarts us and Launch counts it); a committed release
	// that is gone or broken leaves the packaged binary to run.
	if dec.Trial {
		return launched{}, fmt.Errorf("start %s: %w", dec.Exec, err)
	}
	log("update: the committed release cannot be started; running the packaged binary", "file", dec.Exec, "err", err)
	return launched{rolledBack: l.rolledBack}, nil
}

// trialReady records in the update state that this trial start became
// READY, so that a crash from now on gets the trial its second start
// (update.Dir.Ready); a start that never gets here is rolled back at the
// next one.
func (d *daemon) trialReady() {
	if !d.trial {
		return
	}
	u, err := d.e.UpdateDir()
	if err == nil {
		err = u.Ready(d.e.Version)
	}
	if err != nil {
		d.log.Error("update: could not record that the release on trial is ready; a restart will roll it back", "version", d.e.Version, "err", err)
	}
}

// trialCommit commits the release on trial once the daemon has been READY
// and every tick since has fed the watchdog, for settle: tickDone calls
// it after each WATCHDOG=1.
func (d *daemon) trialCommit() {
	if !d.trial || d.committed || d.healthySince.IsZero() || time.Since(d.healthySince) < d.settle {
		return
	}
	d.committed = true
	u, err := d.e.UpdateDir()
	if err == nil {
		_, err = u.Commit(d.e.Version)
	}
	if err != nil {
		d.log.Error("update: could not commit the release on trial; it will be rolled back at the next start", "version", d.e.Version, "err", err)
		return
	}
	d.log.Info("update committed: this version was ready and healthy for the settling time and is kept", "version", d.e.Version, "settle", d.settle)
	d.notify("STATUS=update to " + d.e.Version + " committed")
}

// restartForUpdate is called on SIGHUP: when a release is staged, the
// daemon stops and exits with ExitRestart.
func (d *daemon) restartForUpdate() {
	u, err := d.e.UpdateDir()
	if err != nil {
		d.log.Error("update: the data directory's binaries", "err", err)
		return
	}
	s, ok, err := u.Pending()
	if err != nil || !ok {
		return
	}
	d.log.Warn("update: a release is staged; stopping to start it on trial", "version", s.Version, "running", d.e.Version)
	d.restart(errUpdateRestart)
}

// ReleaseKeyPath is the release public key: release.pub beside the config
// file, /etc/questbox/release.pub without one.
func (e *Env) ReleaseKeyPath() string { return releaseKey(e.Cfg) }

// releaseKey is cfg's release public key (Env.ReleaseKeyPath).
func releaseKey(cfg *config.Config) string {
	if cfg.Path != "" {
		return filepath.Join(filepath.Dir(cfg.Path), "release.pub")
	}
	return "/etc/questbox/release.pub"
}

// daemonUpdater is the dashboard's api.Updater: an upload is installed as
// `questbox update` installs a file (update.Dir.Install), and the daemon
// then restarts into it.
type daemonUpdater struct{ d *daemon }

func (u daemonUpdater) Install(ctx context.Context, binary, sig []byte) (api.UpdateStatus, error) {
	e := u.d.e
	pub, err := release.ReadPublicKey(e.ReleaseKeyPath())
	if err != nil {
		return api.UpdateStatus{}, err
	}
	dir, err := e.UpdateDir()
	if err != nil {
		return api.UpdateStatus{}, err
	}
	r, _, err := dir.Install(pub, release.Host(), binary, sig)
	if update.Refused(err) {
		u.d.log.Warn("update: an upload on the dashboard was refused; nothing changed", "err", err)
		code := api.CodeInvalid
		if errors.Is(err, update.ErrOnTrial) {
			code = api.CodeConflict
		}
		return api.UpdateStatus{}, &api.Error{Code: code, Message: "refused, nothing changed: " + err.Error()}
	}
	if err != nil {
		return api.UpdateStatus{}, err
	}
	u.d.log.Warn("update: a release uploaded on the dashboard is staged; stopping to start it on trial", "version", r.Version, "running", u.d.e.Version)
	st, err := u.Status()
	if u.d.restart != nil {
		u.d.restart(errUpdateRestart)
	}
	return st, err
}

func (u daemonUpdater) Status() (api.UpdateStatus, error) {
	dir, err := u.d.e.UpdateDir()
	if err != nil {
		return api.UpdateStatus{}, err
	}
	s, err := dir.State()
	if err != nil {
		return api.UpdateStatus{}, err
	}
	st := api.UpdateStatus{Running: u.d.e.Version, Committed: s.Current.Version, Last: s.Last}
	if s.Previous != nil {
		st.Rollback = s.Previous.Version
	}
	if s.Trial != nil {
		st.Trial = s.Trial.Version
	}
	return st, nil
}
