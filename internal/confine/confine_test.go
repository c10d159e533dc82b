//go:build linux

package confine

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/questbox/questbox/internal/buildtest"
)

// harness is a box in a temporary directory: a hidden data directory
// holding a secret, a hidden config file, a project the runs may write,
// a directory outside it, and a launcher over them.
type harness struct {
	t                      *testing.T
	l                      *Launcher
	data, secret, config   string
	project, outside, runs string
	sock                   string // a hidden socket's path, not bound
}

func newHarness(t *testing.T, without ...Layer) *harness {
	t.Helper()
	return newHarnessWith(t, Config{Without: without}, New)
}

// newHarnessWith is newHarness with the launcher newLauncher makes of cfg
// (its hidden paths and runs' directory the harness's).
func newHarnessWith(t *testing.T, cfg Config, newLauncher func(Config) (*Launcher, error)) *harness {
	t.Helper()
	root := t.TempDir()
	h := &harness{t: t, data: filepath.Join(root, "data"), config: filepath.Join(root, "questbox.toml"),
		project: filepath.Join(root, "project"), outside: filepath.Join(root, "outside"), runs: filepath.Join(root, "runs"),
		sock: filepath.Join(root, "control.sock")}
	h.secret = filepath.Join(h.data, "questbox.db")
	for _, d := range []string{h.data, h.project, h.outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{h.secret, h.config} {
		if err := os.WriteFile(f, []byte("the box's secret"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg.Hidden, cfg.Runs = []string{h.data, h.config, h.sock}, h.runs
	l, err := newLauncher(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.l = l
	t.Logf("confinement: %s", l.Probe(context.Background()))
	return h
}

// agent is the test binary as a confined agent making attempts
// (agentMain), working in the project, not yet confined.
func (h *harness) agent(attempts ...string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		h.t.Fatal(err)
	}
	cmd := exec.Command(exe, attempts...)
	cmd.Env = []string{agentEnv + "=1"}
	cmd.Dir = h.project
	return cmd
}

// run runs the agent confined with r and returns each attempt's outcome:
// "ok" or "refused: <error>".
func (h *harness) run(r Run, attempts ...string) map[string]string {
	h.t.Helper()
	cmd := h.agent(attempts...)
	cleanup, err := h.l.Confine(cmd, r)
	if err != nil {
		h.t.Fatal(err)
	}
	defer cleanup()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		h.t.Fatalf("confined agent: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
	}
	got := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		for _, a := range attempts {
			if rest, ok := strings.CutPrefix(sc.Text(), a+" "); ok {
				got[a] = rest
			}
		}
	}
	for _, a := range attempts {
		if _, ok := got[a]; !ok {
			h.t.Fatalf("the agent did not report %q:\n%s\nstderr:\n%s", a, out, stderr.String())
		}
	}
	return got
}

// target is a process of the daemon's (unconfined, same user) for the
// runs to try to reach; it is killed when the test ends.
func target(t *testing.T) *os.Process {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = []string{agentEnv + "=sleep", "QB_TARGET_SECRET=s3cret"}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd.Process
}

// alive reports whether p has not exited (it is never reaped before the
// test ends).
func alive(p *os.Process) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.Pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) STATE …: a killed, unreaped process is a zombie.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// mode is one confinement the checks run under.
type mode struct {
	name    string
	without []Layer
	// small: the launcher is cmd/questbox-confine, as the daemon
	// ships; else the test binary (the fallback, the daemon's own
	// binary, or the small launcher where TestAsUnprivilegedUser puts
	// it beside its copy).
	small bool
}

// modes are the confinements every check runs under: every layer, with
// the small launcher and with the test binary as the launcher, and Layer
// A alone (as on a kernel without user namespaces).
var modes = []mode{
	{"all layers", nil, false},
	{"all layers, questbox-confine", nil, true},
	{"without namespaces", []Layer{Namespaces}, false},
}

// harness is a harness confined as m says; with the small launcher, it
// fails the test unless that launcher is the one the runs start.
func (m mode) harness(t *testing.T) *harness {
	t.Helper()
	if !m.small {
		return newHarness(t, m.without...)
	}
	exe := smallLauncher(t)
	h := newHarnessWith(t, Config{Exe: exe, Without: m.without}, New)
	if r := h.l.Report(); r.Launcher != exe || r.Fallback != "" {
		t.Fatalf("the launcher is %s (%s), want %s", r.Launcher, r.Fallback, exe)
	}
	return h
}

// smallLauncher is cmd/questbox-confine of this test binary's build: the
// one beside it (where TestAsUnprivilegedUser puts it), else one built.
func smallLauncher(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	beside := filepath.Join(filepath.Dir(exe), LauncherName)
	if _, err := os.Stat(beside); err == nil {
		return beside
	}
	return buildtest.Launcher(t)
}

func TestConfinedAgent(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			h := m.harness(t)
			if m.without == nil && !h.l.Report().Applied(Namespaces) {
				failOrSkip(t, "no user namespaces here: %s", h.l.Report())
			}
			if !h.l.Report().Applied(Landlock) || !h.l.Report().Applied(Seccomp) {
				t.Fatalf("Layer A is not whole here: %s", h.l.Report())
			}
			tp := target(t)
			pid := strconv.Itoa(tp.Pid)
			self := strconv.Itoa(os.Getpid())
			// A descriptor of the daemon's that is not close-on-exec.
			leak, err := syscall.Open(h.secret, syscall.O_RDONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer syscall.Close(leak)
			var st syscall.Stat_t
			if err := syscall.Fstat(leak, &st); err != nil {
				t.Fatal(err)
			}
			leaked := strconv.Itoa(leak) + "/" + strconv.FormatUint(st.Ino, 10)
			// A socket in the data directory, and the control socket
			// elsewhere (bound after the launcher was made).
			sock := filepath.Join(h.data, "questbox.sock")
			for _, s := range []string{sock, h.sock} {
				ln, err := net.Listen("unix", s)
				if err != nil {
					t.Fatal(err)
				}
				defer ln.Close()
			}
			os.Setenv("QB_DAEMON_SECRET", "s3cret")
			defer os.Unsetenv("QB_DAEMON_SECRET")

			mustOK := []string{
				"write:" + filepath.Join(h.project, "answer.txt"),
				"write:relative.txt",
				"read:/etc/hostname",
				"list:" + h.outside,
				"getenv:TMPDIR",
				"socketpair:",
			}
			mustRefuse := []string{
				"read:" + h.secret,
				"list:" + h.data,
				"write:" + filepath.Join(h.data, "new"),
				"write:" + h.secret,
				"read:" + h.config,
				"write:" + h.config,
				"write:" + filepath.Join(h.outside, "escape"),
				"write:/tmp/questbox-confine-escape",
				"list:" + h.runs,
				"link:" + h.secret,
				"symlink:" + h.secret,
				"signal:" + pid,
				"ptrace:" + pid,
				"vmread:" + pid,
				"getfd:" + pid,
				"read:/proc/" + pid + "/environ",
				"read:/proc/" + self + "/environ",
				"read:/proc/" + self + "/fd/" + strconv.Itoa(leak),
				"read:/proc/" + self + "/root" + h.secret,
				"list:/proc/" + self + "/cwd",
				"dialunix:" + sock,
				"dialunix:" + h.sock,
				"userns:",
				"mount:" + h.project,
				"fd:" + leaked,
				"getenv:QB_DAEMON_SECRET",
				"getenv:" + specEnv,
				"getenv:HOME", // the environment is the one given, and no more
			}
			got := h.run(Run{Write: []string{h.project}}, append(mustOK, mustRefuse...)...)
			for _, a := range mustOK {
				if got[a] != "ok" {
					t.Errorf("%s: %s, want ok", a, got[a])
				}
			}
			for _, a := range mustRefuse {
				if !strings.HasPrefix(got[a], "refused") {
					t.Errorf("%s: %s, want refused", a, got[a])
				}
			}
			for _, a := range []string{"signal:" + pid, "ptrace:" + pid, "vmread:" + pid, "getfd:" + pid} {
				if e := got[a]; !strings.Contains(e, "operation not permitted") && !strings.Contains(e, "no such process") {
					t.Errorf("%s: %s, want EPERM or ESRCH", a, e)
				}
			}
			if !alive(tp) {
				t.Errorf("the daemon's process %d did not survive the run", tp.Pid)
			}
			if b, err := os.ReadFile(filepath.Join(h.project, "answer.txt")); err != nil || string(b) != "agent was here" {
				t.Errorf("the project's answer.txt: %q, %v", b, err)
			}
			if b, err := os.ReadFile(h.secret); err != nil || string(b) != "the box's secret" {
				t.Errorf("the secret changed: %q, %v", b, err)
			}
			if _, err := os.Stat(filepath.Join(h.outside, "escape")); err == nil {
				t.Error("the agent wrote outside its project")
			}
		})
	}
}

// failOrSkip skips the test, or fails it under CI, where every layer
// must be there.
func failOrSkip(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// processesWith lists the pids of the processes whose command line holds
// mark.
func processesWith(t *testing.T, mark string) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(b, []byte(mark)) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// A process the agent starts in a session of its own, and leaves
// running, ends with the run: the agent is PID 1 of its namespace.
func TestGrandchildEndsWithTheRun(t *testing.T) {
	h := newHarness(t)
	if !h.l.Report().Applied(Namespaces) {
		failOrSkip(t, "no PID namespace here: %s", h.l.Report())
	}
	mark := "qb-grandchild-" + strconv.Itoa(os.Getpid()) + "-" + filepath.Base(h.project)
	got := h.run(Run{Write: []string{h.project}}, "spawn:"+mark)
	if got["spawn:"+mark] != "ok" {
		t.Fatalf("spawn: %s", got["spawn:"+mark])
	}
	if pids := processesWith(t, mark); len(pids) > 0 {
		for _, p := range pids {
			if pid, err := strconv.Atoi(p); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		t.Fatalf("the run's grandchild outlived it: pids %v", pids)
	}
}

// The fallback: without namespaces, the report says exactly which layers
// are missing and why, and says how a local-only run is kept off the
// network instead.
func TestProbeReportsWhatItCouldNotApply(t *testing.T) {
	h := newHarness(t, Namespaces)
	r := h.l.Report()
	want := map[Layer]string{
		Namespaces: "disabled",
		Network:    "disabled; instead, local-only runs cannot open IPv4 or IPv6 sockets (seccomp)",
		Hide:       "needs the namespaces",
		Proc:       "needs the namespaces",
	}
	for _, s := range r.Layers {
		if why, missing := want[s.Layer]; missing {
			if s.Applied || s.Detail != why {
				t.Errorf("%s: applied %v (%s), want not applied (%s)", s.Layer, s.Applied, s.Detail, why)
			}
		} else if !s.Applied {
			t.Errorf("%s is not applied: %s", s.Layer, s.Detail)
		}
	}
	if len(r.Layers) != len(layers) {
		t.Errorf("the report has %d layers, want %d: %s", len(r.Layers), len(layers), r)
	}
	str := r.String()
	for _, w := range []string{"NOT applied: namespaces (disabled), network namespace (disabled; instead", "applied: session, descriptors"} {
		if !strings.Contains(str, w) {
			t.Errorf("report %q does not say %q", str, w)
		}
	}
	if r.Complete() {
		t.Error("a report with missing layers is complete")
	}

	// Without Landlock, the runs still may not reach the hidden paths:
	// the namespaces' mounts cover them.
	h = newHarness(t, Landlock)
	if s := h.l.Report(); s.Applied(Landlock) || !strings.Contains(s.String(), "landlock (disabled)") {
		t.Errorf("report without Landlock: %s", s)
	}
	if !h.l.Report().Applied(Hide) {
		failOrSkip(t, "no namespaces here: %s", h.l.Report())
	}
	got := h.run(Run{Write: []string{h.project}}, "read:"+h.secret, "write:"+filepath.Join(h.project, "x"))
	if !strings.HasPrefix(got["read:"+h.secret], "refused") || got["write:"+filepath.Join(h.project, "x")] != "ok" {
		t.Errorf("without Landlock: %v", got)
	}
}

// A run that fails to get a layer the probe found does not run the agent.
func TestRunFailsWhenALayerFails(t *testing.T) {
	h := newHarness(t)
	cmd := h.agent("write:" + filepath.Join(h.outside, "ran"))
	cmd.Dir = h.outside
	cleanup, err := h.l.Confine(cmd, Run{Write: []string{h.project}})
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	// The directory the run may write vanishes between the confinement
	// and the start: Landlock cannot take its rule, and the launcher
	// stops rather than run the agent with a layer missing.
	if err := os.Remove(h.project); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 126 || !strings.Contains(string(out), "questbox confine: landlock: writable "+h.project) {
		t.Fatalf("got %v, %q; want exit 126 naming Landlock and the directory", err, out)
	}
	if _, err := os.Stat(filepath.Join(h.outside, "ran")); err == nil {
		t.Error("the agent ran")
	}
}
