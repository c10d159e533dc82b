package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/questbox/questbox/internal/buildtest"
	"github.com/questbox/questbox/internal/daemon/daemontest"
	"github.com/questbox/questbox/ui/api"
	"github.com/questbox/questbox/ui/mqtt/mosquittotest"
)

// attacks are the names scripts/attack-agent.sh records, each "denied"
// when the agent is confined (only write-project may be ok, and its
// marker child must have run).
var attacks = []string{"read-db", "append-db", "read-password", "list-data", "control-socket", "read-config",
	"write-parent", "write-tmp", "write-shm", "write-data", "proc-environ", "proc-fd", "proc-root", "proc-cwd",
	"proc-map-files", "symlink-read", "symlink-list", "signal-daemon"}

// TestAgentIsConfined is the attacking agent, end to end: a real `questbox
// run` as `make run` starts it (sim GPIO, the store in a data directory,
// the dashboard on a free loopback port, a config with the broker's
// password and a command provider) runs scripts/attack-agent.sh as the
// agent of a quest with a project directory. It knows every path and
// the daemon's pid (a file the test leaves in the project): the worst
// case, since an agent can find them while they are not hidden. Only writing in the project (and the
// marker child, in the project) works; every other attempt is refused;
// the marker child is gone once the run is recorded; the daemon lives,
// the run ends normally with its answer judged (PASS), and the store
// verifies.
//
// As root it runs three times: as root (CI's case), as the unprivileged
// user nobody (uid 65534, a normal user's `make run`), and as root where
// the daemon's children cannot create user namespaces (a kernel or a
// container without them), which leaves the agents Landlock and seccomp
// only: the daemon must say so at start, and the control socket's peer
// check is what refuses the agent there. As another user it runs once,
// as that user.
func TestAgentIsConfined(t *testing.T) {
	bin := buildtest.Questbox(t)
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Fatalf("the attacking agent needs setsid (util-linux): %v", err)
	}
	if os.Geteuid() != 0 {
		t.Run("user", func(t *testing.T) { attackAsAgent(t, bin, attackScenario{}) })
		t.Run("root", func(t *testing.T) {
			if os.Getenv("CI") == "true" {
				t.Fatal("CI runs the tests as root: this case runs the daemon as root")
			}
			t.Skip("runs the daemon as root")
		})
		return
	}
	t.Run("root", func(t *testing.T) { attackAsAgent(t, bin, attackScenario{}) })
	t.Run("nobody", func(t *testing.T) { attackAsAgent(t, bin, attackScenario{cred: unprivileged(t)}) })
	t.Run("root-without-user-namespaces", func(t *testing.T) {
		attackAsAgent(t, bin, attackScenario{noUserNS: true})
	})
}

// attackScenario is how attackAsAgent runs the daemon.
type attackScenario struct {
	// cred is the daemon's user; nil: the test's own.
	cred *syscall.Credential
	// noUserNS starts the daemon (as root) in a user namespace of its own
	// whose children may create no user namespace.
	noUserNS bool
}

// unprivileged is the credential of an unprivileged user to run the
// daemon as: nobody, or a system user the test creates when the machine
// has no nobody.
func unprivileged(t *testing.T) *syscall.Credential {
	t.Helper()
	u, err := user.Lookup("nobody")
	if err != nil {
		name := fmt.Sprintf("qbagent%d", rand.IntN(1e6))
		if out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput(); err != nil {
			t.Fatalf("no user nobody and useradd %s failed: %v: %s", name, err, out)
		}
		t.Cleanup(func() { exec.Command("userdel", name).Run() })
		if u, err = user.Lookup(name); err != nil {
			t.Fatal(err)
		}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}
}

// attackAsAgent runs the scenario of TestAgentIsConfined with the daemon
// started as sc says.
func attackAsAgent(t *testing.T, bin string, sc attackScenario) {
	r := newAttackRig(t, bin, sc)
	r.startDaemon()
	r.checkLauncher()
	ev, survivors := r.runAttacker()
	n := r.checkRecordedRun(ev)
	r.checkAttempts(n, survivors)
	r.checkEscapes()
	r.stopDaemon()
}

// attackRig is the box of one attack scenario: a daemon started as its
// scenario says, with the attacking agent as its one provider.
type attackRig struct {
	t      *testing.T
	sc     attackScenario
	token  string // in the marker processes' command lines and escape files
	dir    string
	data   string
	work   string
	cfg    string
	qbBin  string
	d      []string // --config and --data, for the CLI
	broker *mosquittotest.Broker

	project, logPath, sock, pwFile string
	password                       []byte

	daemon  *exec.Cmd
	exited  chan struct{} // closed once the daemon exited, waitErr set
	waitErr error
}

// own makes path's mode mode and, with a credential, its owner that user.
func (r *attackRig) own(path string, mode os.FileMode) {
	r.t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		r.t.Fatal(err)
	}
	if cred := r.sc.cred; cred != nil {
		if err := os.Lchown(path, int(cred.Uid), int(cred.Gid)); err != nil {
			r.t.Fatal(err)
		}
	}
}

// newAttackRig lays out the scenario's directories, the binary and the
// agent's script where the daemon's user may run them, and its config.
func newAttackRig(t *testing.T, bin string, sc attackScenario) *attackRig {
	dir := daemontest.ShortDir(t)
	r := &attackRig{t: t, sc: sc, token: fmt.Sprintf("qb%d", rand.Uint64()), dir: dir,
		data: filepath.Join(dir, "data"), work: filepath.Join(dir, "work"), cfg: filepath.Join(dir, "questbox.toml")}
	r.project = filepath.Join(r.work, "project")
	r.d = []string{"--config", r.cfg, "--data", r.data}
	r.own(dir, 0o755)
	for _, d := range []string{r.work, r.project} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		r.own(d, 0o755)
	}
	// The binary where the daemon's user may run it (the build's
	// directory is the test user's, 0700), and its launcher beside it,
	// as they are installed.
	r.qbBin = filepath.Join(dir, "questbox")
	copyFile(t, bin, r.qbBin, 0o755)
	copyFile(t, filepath.Join(filepath.Dir(bin), "questbox-confine"), filepath.Join(dir, "questbox-confine"), 0o755)
	// The script too (the repository may not be the daemon's user's to
	// read).
	script := filepath.Join(dir, "attack-agent.sh")
	copyFile(t, "../../scripts/attack-agent.sh", script, 0o755)
	argv, _ := json.Marshal([]string{"sh", script, r.project, r.data, r.cfg, r.qbBin, r.token})

	pass := "broker-" + r.token
	r.broker = mosquittotest.Start(t, mosquittotest.Options{Users: map[string]string{"qb": pass}})
	if err := os.WriteFile(r.cfg, fmt.Appendf(nil, `[daemon]
listen = "127.0.0.1:0"
memory_limit = "off"
[network]
probe = ""
[gpio]
backend = "sim"
[mqtt]
broker = %q
username = "qb"
password = %q
reconnect_max = "1s"
[providers.attacker]
type = "command"
argv = %s
env = ["PATH"]
timeout = "2m"
`, r.broker.URL(), pass, argv), 0o600); err != nil {
		t.Fatal(err)
	}
	r.own(r.cfg, 0o600)
	return r
}

// copyFile copies from to to, with mode.
func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	raw, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, raw, mode); err != nil {
		t.Fatal(err)
	}
}

// daemonCommand is the daemon, as `make run` starts it, with a secret in
// its environment for the agent to look for, run as the scenario says.
func (r *attackRig) daemonCommand() *exec.Cmd {
	daemon := exec.Command(r.qbBin, "run", "--config", r.cfg, "--data", r.data, "--tick", "200ms")
	daemon.Env = []string{"PATH=" + os.Getenv("PATH"), "QUESTBOX_TEST_SECRET=" + r.token}
	switch {
	case r.sc.cred != nil:
		daemon.SysProcAttr = &syscall.SysProcAttr{Credential: r.sc.cred}
	case r.sc.noUserNS:
		// The limit is the user namespace's own: the machine's is
		// untouched.
		daemon.Args = append([]string{"sh", "-c", `echo 0 >/proc/sys/user/max_user_namespaces && exec "$0" "$@"`}, daemon.Args...)
		daemon.Path = "/bin/sh"
		daemon.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}}}
	}
	return daemon
}

// startDaemon starts the daemon and waits until it is ready: its control
// socket answers and the dashboard has its password. The agent finds the
// daemon's pid in its project.
func (r *attackRig) startDaemon() {
	t := r.t
	r.daemon = r.daemonCommand()
	r.logPath = filepath.Join(t.TempDir(), "daemon.log")
	logf, err := os.Create(r.logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logf.Close() })
	r.daemon.Stdout, r.daemon.Stderr = logf, logf
	if err := r.daemon.Start(); err != nil {
		t.Fatal(err)
	}
	r.exited = make(chan struct{})
	go func() { r.waitErr = r.daemon.Wait(); close(r.exited) }()
	t.Cleanup(func() {
		r.daemon.Process.Kill()
		<-r.exited
		// Whatever the agent left running (unconfined, its marker child
		// outlives the run): it was started by this test.
		for _, pid := range processesNamed(t, r.token) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		os.Remove(filepath.Join("/tmp", "escape-"+r.token))
		os.Remove(filepath.Join("/dev/shm", "escape-"+r.token))
	})
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(r.logPath)
			t.Logf("daemon log:\n%s", b)
		}
	})
	r.sock = filepath.Join(r.data, "questbox.sock")
	waitFor(t, "the daemon's control socket", func() bool {
		select {
		case <-r.exited:
			b, _ := os.ReadFile(r.logPath)
			t.Fatalf("the daemon exited before it answered: %v\n%s", r.waitErr, b)
		default:
		}
		return daemonRunning(context.Background(), r.sock)
	})
	hint := filepath.Join(r.project, "daemon.pid")
	if err := os.WriteFile(hint, []byte(strconv.Itoa(r.daemon.Process.Pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.own(hint, 0o644)
	// Ready: the dashboard has its password, the engine answers.
	r.pwFile = filepath.Join(r.data, "dashboard.password")
	waitFor(t, "the dashboard's password file", func() bool {
		fi, err := os.Stat(r.pwFile)
		return err == nil && fi.Size() > 0
	})
	if r.password, err = os.ReadFile(r.pwFile); err != nil {
		t.Fatal(err)
	}
}

// runAttacker makes the quest whose one run is the attacking agent and
// waits for the run's end, as the faces see it: its verdict event. It
// returns that event and the marker processes left running.
func (r *attackRig) runAttacker() (api.Event, []int) {
	t := r.t
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	verdict := make(chan api.Event, 1)
	watchErr := make(chan error, 1)
	go func() {
		watchErr <- api.NewClient(api.SocketClient(r.sock), r.sock).Watch(ctx, 0, func(b api.EventBatch) error {
			for _, ev := range b.Events {
				if ev.Kind == api.KindVerdict && ev.Node == "n1" {
					verdict <- ev
					return errVerdictSeen
				}
			}
			return nil
		})
	}()
	t.Cleanup(func() {
		if t.Failed() {
			// Why each attempt was denied, or what it got: the run's log.
			t.Logf("the agent's log:\n%s", qb(t, "", append([]string{"logs", "n1"}, r.d...)...).stdout)
		}
	})
	must(t, 0, "", append([]string{"quest", "new", "probe", "--direction", "find out what an agent may touch",
		"--provider", "attacker", "--mode", "solo", "--max-tries", "1", "--max-agent-runs", "1", "--project", r.project}, r.d...)...)

	var ev api.Event
	select {
	case ev = <-verdict:
	case err := <-watchErr:
		t.Errorf("the event watch ended before the run's verdict: %v", err)
	case <-r.exited:
		t.Errorf("the daemon died during the run: %v", r.waitErr)
	}
	results, _ := os.ReadFile(filepath.Join(r.project, "results.txt"))
	t.Logf("what the agent could do:\n%s", results)
	survivors := processesNamed(t, r.token)
	if t.Failed() {
		t.Fatalf("the run did not end normally; marker processes left: %v", survivors)
	}
	return ev, survivors
}

// checkRecordedRun checks the run is recorded as a normal run, its
// answer judged, and returns its node.
func (r *attackRig) checkRecordedRun(ev api.Event) api.Node {
	t := r.t
	if ev.Outcome != "PASS" {
		t.Errorf("the run's verdict: %s %v, want PASS", ev.Outcome, ev.Facts)
	}
	var runs []api.Run
	decode(t, must(t, 0, "", append([]string{"runs", "--json"}, r.d...)...), &runs)
	if len(runs) != 1 || runs[0].Exit != "answered" || runs[0].Outcome != "PASS" {
		t.Errorf("runs: %+v, want one run answered and PASS", runs)
	}
	n := nodeOf(t, showQuest(t, r.data, "q1"), "n1")
	if n.Status != "aborted" || n.Verdict != "dead" {
		t.Errorf("node n1: %s (verdict %q), want aborted with the agent's verdict dead", n.Status, n.Verdict)
	}
	return n
}

// checkAttempts checks what the agent could do, as it says in its
// evidence (n's), and as the box sees it (the survivors of its run).
func (r *attackRig) checkAttempts(n api.Node, survivors []int) {
	t, sc := r.t, r.sc
	got := map[string]string{}
	for _, f := range strings.Fields(strings.TrimPrefix(n.Evidence, "confinement probe:")) {
		k, v, _ := strings.Cut(f, "=")
		got[k] = v
	}
	if got["write-project"] != "ok" {
		t.Errorf("the agent could not write in its own project: %q", got["write-project"])
	}
	if got["marker"] != "running" {
		t.Errorf("the agent's marker child did not run: %q", got["marker"])
	}
	for _, a := range attacks {
		if got[a] != "denied" {
			t.Errorf("attempt %s: %q, want denied", a, got[a])
		}
	}
	// And as the box sees it.
	if len(survivors) > 0 {
		t.Errorf("the agent's setsid'd child outlived its run: processes %v", survivors)
	}
	if sc.noUserNS {
		r.checkWithoutNamespaces()
	}
}

// checkLauncher checks that the daemon's start-up report names the
// small launcher beside it as the one its runs start, and that selftest's
// report, on its first line, does too.
func (r *attackRig) checkLauncher() {
	launcher := filepath.Join(r.dir, "questbox-confine")
	if b, _ := os.ReadFile(r.logPath); !bytes.Contains(b, []byte("; launcher "+launcher+`"`)) {
		r.t.Errorf("the daemon's start-up report does not name %s as the launcher:\n%s", launcher, b)
	}
	// selftest then refuses (the daemon holds the pins): its first line
	// is what is checked.
	out, _ := exec.Command(r.qbBin, append([]string{"selftest"}, r.d...)...).Output()
	first, _, _ := strings.Cut(string(out), "\n")
	if !strings.HasPrefix(first, "confinement: applied: ") || !strings.HasSuffix(first, "; launcher "+launcher) {
		r.t.Errorf("selftest's first line does not name %s as the launcher: %q", launcher, first)
	}
}

// checkWithoutNamespaces checks that a daemon whose runs get no
// namespaces says so, and keeps the control socket out of their reach.
func (r *attackRig) checkWithoutNamespaces() {
	t := r.t
	// Never silently less: the daemon names what it could not apply.
	if b, _ := os.ReadFile(r.logPath); !bytes.Contains(b, []byte("agents run with less confinement than they could")) ||
		!bytes.Contains(b, []byte("NOT applied: namespaces (")) {
		t.Error("the daemon did not say at start that the runs get no namespaces")
	}
	// The control socket stays out of reach either way: the run cannot
	// make a unix socket (seccomp, where the socket cannot be hidden),
	// and the daemon's peer check refuses a confined caller that could
	// (ui/api's TestConfinedPeersAreRefused).
	logs := qb(t, "", append([]string{"logs", "n1"}, r.d...)...).stdout
	if !strings.Contains(logs, "probe control-socket: denied") {
		t.Errorf("without namespaces the agent reached the control socket; its log:\n%s", logs)
	}
}

// checkEscapes checks the agent wrote nothing outside its project and
// left the dashboard's password as it was.
func (r *attackRig) checkEscapes() {
	t := r.t
	for _, f := range []string{filepath.Join(r.work, "escape-"+r.token), filepath.Join("/tmp", "escape-"+r.token),
		filepath.Join("/dev/shm", "escape-"+r.token), filepath.Join(r.data, "escape-"+r.token)} {
		if _, err := os.Lstat(f); err == nil {
			t.Errorf("the agent wrote %s, outside its project", f)
		}
	}
	if now, _ := os.ReadFile(r.pwFile); !bytes.Equal(now, r.password) {
		t.Error("the dashboard password file changed during the run")
	}
}

// stopDaemon checks the daemon lives on, answers and its store verifies,
// then stops it with SIGTERM and verifies the store again.
func (r *attackRig) stopDaemon() {
	t := r.t
	select {
	case <-r.exited:
		t.Fatalf("the daemon exited: %v", r.waitErr)
	default:
	}
	must(t, 0, "", append([]string{"verify"}, r.d...)...)
	r.daemon.Process.Signal(syscall.SIGTERM)
	<-r.exited
	if r.waitErr != nil {
		t.Errorf("the daemon's exit after SIGTERM: %v", r.waitErr)
	}
	must(t, 0, "", append([]string{"verify"}, r.d...)...)
}

// errVerdictSeen ends the event watch of TestAgentIsConfined.
var errVerdictSeen = errors.New("verdict seen")

// processesNamed lists the processes whose command line holds token.
func processesNamed(t *testing.T, token string) []int {
	t.Helper()
	var pids []int
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range procs {
		cmdline, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(cmdline, []byte(token)) {
			continue
		}
		pid, _ := strconv.Atoi(strings.Split(p, "/")[2])
		if pid != os.Getpid() {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	return pids
}
