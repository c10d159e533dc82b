package confine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// runVerb and probeVerb are the hidden first arguments that make a
// binary whose main calls [Main] a launcher; buildVerb makes it print its
// build (see build) and exit. specEnv carries the run's specification to
// the launcher; the agent never sees it (its environment is the spec's).
const (
	runVerb   = "__confined-run"
	probeVerb = "__confine-probe"
	buildVerb = "__confine-build"
	specEnv   = "QUESTBOX_CONFINE_SPEC"
)

// Config is what every run of a [Launcher] shares.
type Config struct {
	// Exe is the launcher: a binary whose main calls [Main] first. Empty
	// means the small launcher, [LauncherName] in the directory of this
	// process's executable. Either is used only if it answers with this
	// build (the probe asks it once); otherwise, and when it is missing,
	// this process's own executable is the launcher, and the [Report]
	// says why (Fallback). The paths are read once, by [New], so that an
	// update that replaces the files on disk does not move the launcher
	// under a running daemon.
	Exe string
	// Hidden are the paths no run may read, list, write or connect to:
	// the data directory, the config file, the release key, the control
	// socket, secret files. A path that does not exist yet is hidden when
	// it appears (the control socket before the daemon binds it). Each is
	// resolved through symbolic links once, by New.
	Hidden []string
	// Runs is the directory of the runs' private temporary directories
	// and the quests' scratch directories. It is created mode 0700 and
	// hidden from every run but for the run's own directories. Empty
	// means "questbox-runs-<uid>" in os.TempDir().
	Runs string
	// Without names layers never to attempt: a test's way to take the
	// fallback paths (a kernel without user namespaces, without Landlock).
	// Each is reported as not applied, "disabled".
	Without []Layer
}

// Run is what one run may do besides what every run may.
type Run struct {
	// Write are the directories the run may write besides its temporary
	// directory: the quest's project or scratch directory, and those its
	// provider's configuration adds. Each must exist and must neither
	// hold nor lie in a hidden path ([Launcher.CheckWritable]).
	Write []string
	// Network gives the run the host's network. Without it a run reaches
	// no address outside its own loopback (a network namespace), or,
	// where the kernel gives no namespace, cannot open an IPv4 or IPv6
	// socket at all.
	Network bool
}

// Launcher starts confined commands. It is safe for concurrent use.
type Launcher struct {
	self    string   // this process's executable: the launcher when exe is not fit
	build   string   // this build, as the launcher must answer (build)
	hidden  []string // resolved, cleaned, sorted
	runs    string
	blank   string // an empty file, mode 0, in runs
	without []Layer

	probeOnce sync.Once
	// Set once by probeOnce (exe is set by New, and may be replaced by
	// self there):
	exe       string // the launcher
	fallback  string // why exe is self and not the launcher asked for, if it is
	report    Report // what the probe found
	ns, netns bool   // the probe started the launcher in namespaces (and a network one)
	skip      []Layer
}

// New checks cfg and makes the runs' directory. It does not probe the
// kernel: [Launcher.Probe] does, once, at the first Probe or Confine.
func New(cfg Config) (*Launcher, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("confine: this program, the launcher's fallback, has no known path: %w", err)
	}
	return newLauncher(cfg, self)
}

// newLauncher is New for a process whose executable is self.
func newLauncher(cfg Config, self string) (*Launcher, error) {
	l := &Launcher{self: self, build: build(), exe: cfg.Exe, without: slices.Clone(cfg.Without)}
	if l.exe == "" {
		l.exe = filepath.Join(filepath.Dir(self), LauncherName)
	}
	for _, exe := range []string{l.self, l.exe} {
		if !filepath.IsAbs(exe) {
			return nil, fmt.Errorf("confine: launcher %q is not an absolute path", exe)
		}
	}
	l.runs = cfg.Runs
	if l.runs == "" {
		l.runs = filepath.Join(os.TempDir(), fmt.Sprintf("questbox-runs-%d", os.Geteuid()))
	}
	if err := privateDir(l.runs); err != nil {
		return nil, err
	}
	runs, err := resolve(l.runs)
	if err != nil {
		return nil, err
	}
	l.runs = runs
	l.blank = filepath.Join(l.runs, "blank")
	if err := l.makeRuns(); err != nil {
		return nil, err
	}
	for _, h := range cfg.Hidden {
		if h == "" {
			continue
		}
		if !filepath.IsAbs(h) {
			return nil, fmt.Errorf("confine: hidden path %q is not absolute", h)
		}
		r, err := resolve(h)
		if err != nil {
			return nil, err
		}
		if r == "/" {
			return nil, fmt.Errorf("confine: hidden path %q is the root directory: nothing could run", h)
		}
		l.hidden = append(l.hidden, r)
	}
	slices.Sort(l.hidden)
	l.hidden = slices.Compact(l.hidden)
	for _, h := range l.hidden {
		if within(l.runs, h) || within(h, l.runs) {
			// The mounts that cover h would cover the runs' own
			// directories, or the runs' directory would expose h.
			return nil, fmt.Errorf("confine: runs directory %s overlaps hidden path %s", l.runs, h)
		}
	}
	return l, nil
}

// makeRuns makes the runs' directory and the blank file in it, if they
// are missing: another launcher over the same directory (a CLI's engine
// that stopped as the daemon started) may have removed them (Close).
func (l *Launcher) makeRuns() error {
	if err := privateDir(l.runs); err != nil {
		return err
	}
	// The file the namespaces' mounts put over each hidden file: empty,
	// mode 0, in no run's reach.
	if _, err := os.Lstat(l.blank); err == nil {
		return nil
	}
	if err := os.WriteFile(l.blank, nil, 0); err != nil && !errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("confine: %w", err)
	}
	if err := os.Chmod(l.blank, 0); err != nil {
		return fmt.Errorf("confine: %w", err)
	}
	return nil
}

// privateDir makes dir mode 0700 if it is missing, and refuses one that
// is not a directory of this user's: in a shared /tmp another user could
// have made it first.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("confine: runs directory: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("confine: runs directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("confine: runs directory %s is not a directory", dir)
	}
	if uid, ok := owner(fi); ok && uid != os.Geteuid() {
		return fmt.Errorf("confine: runs directory %s belongs to uid %d, not to this user (uid %d): remove it or choose another", dir, uid, os.Geteuid())
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("confine: runs directory: %w", err)
		}
	}
	return nil
}

// resolve is path with its symbolic links resolved as far as it exists:
// the rest (a socket not bound yet) is appended as it is.
func resolve(path string) (string, error) {
	path = filepath.Clean(path)
	var rest []string
	for p := path; ; p = filepath.Dir(p) {
		r, err := filepath.EvalSymlinks(p)
		if err == nil {
			slices.Reverse(rest)
			return filepath.Join(append([]string{r}, rest...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("confine: %s: %w", path, err)
		}
		if p == "/" || p == "." {
			return path, nil
		}
		rest = append(rest, filepath.Base(p))
	}
}

// within reports whether path is dir or lies below it.
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
}

// Close removes the runs' directory, and with it every run's temporary
// directory and every quest's scratch directory: call it once no run is
// in flight and none will start (the daemon stops).
func (l *Launcher) Close() error {
	removeAll(l.runs)
	if _, err := os.Lstat(l.runs); !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("confine: the runs directory %s stays: %v", l.runs, err)
	}
	return nil
}

// Hidden is the resolved hidden paths.
func (l *Launcher) Hidden() []string { return slices.Clone(l.hidden) }

// Scratch is the private scratch directory of key (a quest id), made
// mode 0700 if missing: the directory a quest without a project writes.
// It lives in the runs' directory, hidden from every other run.
func (l *Launcher) Scratch(key string) (string, error) {
	if key == "" || key == "." || key == ".." || strings.ContainsAny(key, "/\x00") {
		return "", fmt.Errorf("confine: scratch directory: invalid key %q", key)
	}
	dir := filepath.Join(l.runs, "scratch", key)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("confine: scratch directory: %w", err)
	}
	return dir, nil
}

// ConfineAgent is [Launcher.Confine] for an agent of quest: it writes
// project, or without one the quest's [Launcher.Scratch] directory, or
// for a run of no quest (a judge's) nothing but its temporary directory;
// and the directories also. An empty cmd.Dir becomes the project or
// scratch directory.
func (l *Launcher) ConfineAgent(cmd *exec.Cmd, project, quest string, network bool, also ...string) (cleanup func(), err error) {
	r := Run{Network: network}
	switch {
	case project != "":
		r.Write = append(r.Write, project)
	case quest != "":
		dir, err := l.Scratch(quest)
		if err != nil {
			return nil, err
		}
		r.Write = append(r.Write, dir)
	}
	if cmd.Dir == "" && len(r.Write) > 0 {
		cmd.Dir = r.Write[0]
	}
	r.Write = append(r.Write, also...)
	return l.Confine(cmd, r)
}

// CheckWritable says why a run may not be let write dir: it is not an
// absolute path, or it holds or lies in a hidden path or the runs'
// directory (the quests' scratch directories may be written).
func (l *Launcher) CheckWritable(dir string) error {
	_, err := l.writable(dir)
	return err
}

// writable is dir resolved, if a run may write it.
func (l *Launcher) writable(dir string) (string, error) {
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("confine: directory %q that a run may write is not an absolute path", dir)
	}
	w, err := resolve(dir)
	if err != nil {
		return "", err
	}
	for _, h := range append(slices.Clone(l.hidden), l.runs) {
		if within(h, w) || (within(w, h) && h != l.runs) {
			return "", fmt.Errorf("confine: directory %s that a run may write overlaps hidden path %s", dir, h)
		}
	}
	return w, nil
}

// spec is what the daemon tells the launcher about one run.
type spec struct {
	// Build is the daemon's build: the launcher refuses a spec of
	// another (see build).
	Build string   `json:"build"`
	Path  string   `json:"path"` // the agent's executable
	Args  []string `json:"args"` // its argv, argv[0] included
	Env   []string `json:"env"`  // its whole environment
	Dir   string   `json:"dir"`  // its working directory
	// Write are the directories the run may write: its temporary
	// directory and its project or scratch directory.
	Write []string `json:"write"`
	// Hidden are the paths the run cannot reach at all; Private too, but
	// the run's own directories in it stay reachable (the runs'
	// directory).
	Hidden  []string `json:"hidden"`
	Private []string `json:"private"`
	// Blank is an empty file of mode 0 that covers the hidden files.
	Blank string `json:"blank"`
	// NS: the launcher was started in new user, PID, mount and IPC
	// namespaces; NetNS: and a network namespace.
	NS    bool `json:"ns,omitempty"`
	NetNS bool `json:"netns,omitempty"`
	// Network: the run may reach the network. Without it and without
	// NetNS, seccomp refuses IPv4 and IPv6 sockets.
	Network bool `json:"network,omitempty"`
	// Skip are the layers not to attempt: disabled, or found missing by
	// the probe. Every other layer must apply or the run fails.
	Skip []Layer `json:"skip,omitempty"`
	// Probe: apply what can be applied, print the Report as JSON on
	// stdout and exit instead of running anything.
	Probe bool `json:"probe,omitempty"`
}

func (s *spec) skips(l Layer) bool { return slices.Contains(s.Skip, l) }

// Report is what the probe found: the layers every run gets. It probes
// first if nothing has yet.
func (l *Launcher) Report() Report {
	l.Probe(context.Background())
	return l.report
}

// Probe finds out once which layers this machine allows, by starting the
// launcher in probe mode (it applies every layer to itself and reports),
// and returns the report. Every later run gets the layers it found and
// fails if one of them cannot be applied to it. Later calls return the
// same report.
func (l *Launcher) Probe(ctx context.Context) Report {
	l.probeOnce.Do(func() { l.report = l.probe(ctx) })
	return l.report
}

// Confine rewrites cmd, prepared as for a direct start (Path, Args, Env,
// Dir, the standard streams), so that its start runs the launcher, which
// confines itself and execs cmd's program. A nil cmd.Env is an empty
// environment (not the daemon's); TMPDIR is set to the run's private
// temporary directory. An empty cmd.Dir becomes r.Write, else the
// temporary directory.
//
// The cleanup kills what is left of the command's process group and
// removes the temporary directory; call it once the command has been
// waited for. A command made with a context is killed, group and all,
// when the context ends.
func (l *Launcher) Confine(cmd *exec.Cmd, r Run) (cleanup func(), err error) {
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	if cmd.Process != nil {
		return nil, errors.New("confine: command already started")
	}
	l.Probe(context.Background())
	sp := spec{Build: l.build, Path: cmd.Path, Args: slices.Clone(cmd.Args), Hidden: l.hidden, Private: []string{l.runs}, Blank: l.blank, Network: r.Network}
	for _, dir := range r.Write {
		w, err := l.writable(dir)
		if err != nil {
			return nil, err
		}
		sp.Write = append(sp.Write, w)
	}
	if err := l.makeRuns(); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(l.runs, "run-")
	if err != nil {
		return nil, fmt.Errorf("confine: temporary directory: %w", err)
	}
	cleanup = func() {
		killGroup(cmd)
		removeAll(tmp)
	}
	sp.Write = append(sp.Write, tmp)
	sp.Env = []string{"TMPDIR=" + tmp}
	for _, kv := range cmd.Env {
		if !strings.HasPrefix(kv, "TMPDIR=") {
			sp.Env = append(sp.Env, kv)
		}
	}
	switch {
	case cmd.Dir != "":
		sp.Dir = cmd.Dir
	case len(r.Write) > 0:
		sp.Dir = r.Write[0]
	default:
		sp.Dir = tmp
	}
	if !filepath.IsAbs(sp.Dir) {
		if sp.Dir, err = filepath.Abs(sp.Dir); err != nil {
			cleanup()
			return nil, fmt.Errorf("confine: working directory: %w", err)
		}
	}
	sp.NS = l.ns
	sp.NetNS = l.ns && l.netns && !r.Network
	sp.Skip = l.skip
	if err := l.rewrite(cmd, &sp); err != nil {
		cleanup()
		return nil, err
	}
	cancelGroup(cmd)
	return cleanup, nil
}

// removeAll removes dir, making the directories in it writable first: an
// agent may leave a directory without write permission behind.
func removeAll(dir string) {
	if os.RemoveAll(dir) == nil {
		return
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}

// probeSpec is the spec the probe runs with: a run with every layer, no
// network.
func (l *Launcher) probeSpec(tmp string) spec {
	return spec{Build: l.build, Probe: true, Hidden: l.hidden, Private: []string{l.runs}, Blank: l.blank, Write: []string{tmp}, Dir: tmp, Env: []string{"TMPDIR=" + tmp},
		Skip: slices.Clone(l.without)}
}
