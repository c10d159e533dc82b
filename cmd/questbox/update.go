package main

// questbox update FILE|URL: a signed release is checked (release.Check),
// staged in the data directory (package update) and the daemon is asked
// to restart into it (SIGHUP; it exits with exitRestart, which the unit's
// RestartForceExitStatus restarts). The start-up of the packaged binary
// (launch) runs the trial, and the daemon commits it once it has been
// READY and fed the watchdog for the settling time (trialCommit).

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/internal/config"
	"github.com/questbox/questbox/internal/release"
	"github.com/questbox/questbox/internal/update"
	"github.com/questbox/questbox/ui/api"
)

const (
	// exitRestart is the daemon's exit status when it stops to start a
	// staged release: the unit restarts it (RestartForceExitStatus) and
	// does not call it a failure (SuccessExitStatus).
	exitRestart = 75
	// maxRelease bounds a release binary read from a file or a URL.
	maxRelease = 128 << 20
	// launchedEnv is set by the packaged binary when it executes a
	// release from the data directory in its place: its value is the
	// packaged version, and the release does not launch again.
	launchedEnv = "QUESTBOX_LAUNCHED"
	// rolledBackEnv carries what a rollback said across the exec into the
	// committed release, which shows it on the LEDs.
	rolledBackEnv = "QUESTBOX_ROLLED_BACK"
	// defaultSettle is how long a release on trial must be READY and
	// feeding the watchdog before it is committed.
	defaultSettle = 2 * time.Minute
)

// errUpdateRestart is the cause of the daemon's stop when it restarts
// into a staged release.
var errUpdateRestart = errors.New("restarting into a staged release")

// packagedVersion is the version of the packaged binary: this one, unless
// it was launched by the packaged binary in its place.
func (e *env) packagedVersion() string {
	if v := e.getenv(launchedEnv); v != "" {
		return v
	}
	return version
}

func (e *env) updateDir() (*update.Dir, error) {
	return update.Open(e.data, filepath.Join(e.data, engine.StoreFile), e.packagedVersion(), engine.SnapshotStore)
}

// launched is what launch decided for the binary that runs.
type launched struct {
	trial      bool   // this start is a trial of the running version
	rolledBack string // what a rollback at this start said, or ""
}

// launch is the first thing `run` does in the packaged binary: it decides
// which binary runs (update.Dir.Launch) and, when it is another, executes
// it in place of this process; it returns only when this binary runs.
func (e *env) launch(log func(msg string, args ...any)) (launched, error) {
	d, err := e.updateDir()
	if err != nil {
		return launched{}, err
	}
	if e.getenv(launchedEnv) != "" {
		// Launched by the packaged binary: Launch has run already.
		s, err := d.State()
		if err != nil {
			return launched{}, err
		}
		return launched{trial: s.Trial != nil && s.Trial.Version == version && s.Trial.Starts > 0,
			rolledBack: e.getenv(rolledBackEnv)}, nil
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
	env := append(os.Environ(), launchedEnv+"="+version)
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

// updateCmd is `update FILE|URL`.
type updateCmd struct {
	sig, key string
}

func (c *updateCmd) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.sig, "sig", "", "the minisign signature (default: FILE.minisig or URL.minisig)")
	fs.StringVar(&c.key, "key", "", "the release public key (default: release.pub beside the config file, /etc/questbox/release.pub)")
}

func (c *updateCmd) run(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("update", args, "FILE|URL"); err != nil {
		return err
	}
	src := args[0]
	sigSrc := c.sig
	if sigSrc == "" {
		sigSrc = src + ".minisig"
	}
	key := c.key
	if key == "" {
		key = e.releaseKeyPath()
	}
	pub, err := release.ReadPublicKey(key)
	if err != nil {
		return usagef("update: %v", err)
	}
	bin, err := fetch(ctx, src, maxRelease)
	if err != nil {
		return usagef("update: %v", err)
	}
	sig, err := fetch(ctx, sigSrc, 64<<10)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return usagef("update: the signature: %v", err)
	}
	d, err := e.updateDir()
	if err != nil {
		return err
	}
	r, _, err := d.Install(pub, release.Host(), bin, sig)
	if err != nil {
		return usagef("update: %s refused, nothing changed: %v", src, err)
	}
	fmt.Fprintf(e.stdout, "questbox %s (%s) verified and staged; ", r.Version, r.Target)
	pid, err := daemonPID(e.cfg.SocketPath())
	if err != nil {
		fmt.Fprintln(e.stdout, "no daemon runs: it starts on trial at the next start")
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGHUP); err != nil {
		return fmt.Errorf("update: ask the daemon (pid %d) to restart: %w", pid, err)
	}
	fmt.Fprintln(e.stdout, "the daemon restarts into it; it is kept once ready and healthy for the settling time, else the previous version comes back (questbox version shows which)")
	return nil
}

// fetch reads a file, or GETs an http(s) URL, of at most limit bytes. A
// missing file or a 404 is os.ErrNotExist.
func fetch(ctx context.Context, src string, limit int64) ([]byte, error) {
	var r io.Reader
	if strings.HasPrefix(src, "http://") || strings.HasPrefix(src, "https://") {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
		if err != nil {
			return nil, err
		}
		resp, err := (&http.Client{Timeout: 10 * time.Minute}).Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound {
			return nil, fmt.Errorf("%s: %w", src, os.ErrNotExist)
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("%s: %s", src, resp.Status)
		}
		r = resp.Body
	} else {
		f, err := os.Open(src)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", src, limit)
	}
	return b, nil
}

// daemonPID is the pid of the daemon serving the control socket sock,
// from the socket's peer credentials.
func daemonPID(sock string) (int, error) {
	c, err := net.DialTimeout("unix", sock, time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	raw, err := c.(*net.UnixConn).SyscallConn()
	if err != nil {
		return 0, err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return 0, err
	}
	if cerr != nil {
		return 0, cerr
	}
	return int(cred.Pid), nil
}

// trialReady records in the update state that this trial start became
// READY, so that a crash from now on gets the trial its second start
// (update.Dir.Ready); a start that never gets here is rolled back at the
// next one.
func (d *daemon) trialReady() {
	if !d.trial {
		return
	}
	u, err := d.e.updateDir()
	if err == nil {
		err = u.Ready(version)
	}
	if err != nil {
		d.log.Error("update: could not record that the release on trial is ready; a restart will roll it back", "version", version, "err", err)
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
	u, err := d.e.updateDir()
	if err == nil {
		_, err = u.Commit(version)
	}
	if err != nil {
		d.log.Error("update: could not commit the release on trial; it will be rolled back at the next start", "version", version, "err", err)
		return
	}
	d.log.Info("update committed: this version was ready and healthy for the settling time and is kept", "version", version, "settle", d.settle)
	d.notify("STATUS=update to " + version + " committed")
}

// restartForUpdate is called on SIGHUP: when a release is staged, the
// daemon stops and exits with exitRestart.
func (d *daemon) restartForUpdate() {
	u, err := d.e.updateDir()
	if err != nil {
		d.log.Error("update: the data directory's binaries", "err", err)
		return
	}
	s, ok, err := u.Pending()
	if err != nil || !ok {
		return
	}
	d.log.Warn("update: a release is staged; stopping to start it on trial", "version", s.Version, "running", version)
	d.restart(errUpdateRestart)
}

// releaseKeyPath is the release public key: release.pub beside the config
// file, /etc/questbox/release.pub without one.
func (e *env) releaseKeyPath() string { return releaseKey(e.cfg) }

// releaseKey is cfg's release public key (env.releaseKeyPath).
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
	pub, err := release.ReadPublicKey(e.releaseKeyPath())
	if err != nil {
		return api.UpdateStatus{}, err
	}
	dir, err := e.updateDir()
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
	u.d.log.Warn("update: a release uploaded on the dashboard is staged; stopping to start it on trial", "version", r.Version, "running", version)
	st, err := u.Status()
	if u.d.restart != nil {
		u.d.restart(errUpdateRestart)
	}
	return st, err
}

func (u daemonUpdater) Status() (api.UpdateStatus, error) {
	dir, err := u.d.e.updateDir()
	if err != nil {
		return api.UpdateStatus{}, err
	}
	s, err := dir.State()
	if err != nil {
		return api.UpdateStatus{}, err
	}
	st := api.UpdateStatus{Running: version, Committed: s.Current.Version, Last: s.Last}
	if s.Previous != nil {
		st.Rollback = s.Previous.Version
	}
	if s.Trial != nil {
		st.Trial = s.Trial.Version
	}
	return st, nil
}
