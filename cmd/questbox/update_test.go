package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"aead.dev/minisign"

	"github.com/questbox/questbox/internal/buildtest"
	"github.com/questbox/questbox/internal/daemon/daemontest"
	"github.com/questbox/questbox/internal/release"
	"github.com/questbox/questbox/ui/api"
)

// unitSettings are the questbox.service settings that decide whether
// systemd restarts the daemon and how often it may.
type unitSettings struct {
	restart      string
	forceRestart []int  // RestartForceExitStatus
	success      []int  // SuccessExitStatus (beyond 0)
	burst        int    // StartLimitBurst
	timeoutStart string // TimeoutStartSec, as written
}

func readUnit(t *testing.T) unitSettings {
	t.Helper()
	f, err := os.Open("../../systemd/questbox.service")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	u := unitSettings{burst: 5}
	ints := func(v string) (out []int) {
		for _, s := range strings.Fields(v) {
			n, err := strconv.Atoi(s)
			if err != nil {
				t.Fatalf("unit: %q is not an exit status", s)
			}
			out = append(out, n)
		}
		return out
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !ok || strings.HasPrefix(k, "#") {
			continue
		}
		switch k {
		case "Restart":
			u.restart = v
		case "RestartForceExitStatus":
			u.forceRestart = ints(v)
		case "SuccessExitStatus":
			u.success = ints(v)
		case "StartLimitBurst":
			u.burst, _ = strconv.Atoi(v)
		case "TimeoutStartSec":
			u.timeoutStart = v
		}
	}
	return u
}

// fakeSystemd plays systemd's part for questbox.service, as the unit file
// says it: it starts the packaged binary with a NOTIFY_SOCKET (a new one
// per start), waits for READY=1, and restarts the process when it exits
// as Restart=on-failure and RestartForceExitStatus= say — after a failure
// (non-zero status not in SuccessExitStatus, a signal, a start timeout) or
// a forced status. It counts starts against StartLimitBurst (all of a
// test's starts fall within StartLimitIntervalSec). What it does not do:
// wait RestartSec between starts, or time a start out by the clock — a
// broken release that hangs before READY says so on STATUS=, and the
// harness then does what systemd does when TimeoutStartSec runs out
// (kill it, count a failure).
type fakeSystemd struct {
	t      *testing.T
	unit   unitSettings
	bin    string
	args   []string
	dir    string
	starts int
	logs   []string // one log file per start

	cmd    *exec.Cmd
	notify *net.UnixConn
	msgs   <-chan string
	closed chan struct{} // closed with notify: the deliverer stops
	exited chan error
}

func newFakeSystemd(t *testing.T, bin, dir string, args ...string) *fakeSystemd {
	s := &fakeSystemd{t: t, unit: readUnit(t), bin: bin, args: args, dir: dir}
	if s.unit.restart != "on-failure" {
		t.Fatalf("unit: Restart=%s; this harness plays on-failure", s.unit.restart)
	}
	t.Cleanup(func() {
		if s.cmd != nil {
			s.cmd.Process.Kill()
			s.exited <- <-s.exited
		}
	})
	return s
}

// start starts the service once and returns when it is READY (true) or
// failed to start (false: it exited or hung before READY).
func (s *fakeSystemd) start() bool {
	t := s.t
	t.Helper()
	s.starts++
	if s.starts > s.unit.burst {
		t.Fatalf("start %d: over StartLimitBurst=%d; systemd would give up on the unit", s.starts, s.unit.burst)
	}
	sock := filepath.Join(s.dir, fmt.Sprintf("notify%d", s.starts))
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	if s.notify != nil {
		s.notify.Close()
		close(s.closed)
	}
	s.notify, s.closed = c, make(chan struct{})
	logPath := filepath.Join(s.dir, fmt.Sprintf("start%d.log", s.starts))
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	s.logs = append(s.logs, logPath)
	s.cmd = exec.Command(s.bin, s.args...)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.Env = append(os.Environ(), "NOTIFY_SOCKET="+sock)
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logf.Close()
	s.exited = make(chan error, 1)
	go func(cmd *exec.Cmd, done chan<- error) { done <- cmd.Wait() }(s.cmd, s.exited)
	msgs := s.messages()
	// Messages after READY are for until.
	for {
		select {
		case m := <-msgs:
			switch {
			case m == "READY=1":
				return true
			case strings.HasPrefix(m, "STATUS=fault: hanging before READY"):
				// TimeoutStartSec runs out: systemd kills it.
				s.cmd.Process.Kill()
				s.exited <- <-s.exited // for wait
				return false
			}
		case err := <-s.exited:
			s.exited <- err // for wait
			return false
		}
	}
}

// messages reads the current start's sd_notify messages until its socket
// is closed, always at once (a daemon whose notify socket is full blocks,
// as it would under systemd, which never stops reading), and delivers
// them on the returned channel in order.
func (s *fakeSystemd) messages() <-chan string {
	ch := make(chan string)
	c, stop := s.notify, s.closed
	var (
		mu      sync.Mutex // guards pending and closed
		pending []string
		closed  bool
	)
	wake := make(chan struct{}, 1)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := c.Read(buf)
			mu.Lock()
			if err != nil {
				closed = true
			} else {
				pending = append(pending, string(buf[:n]))
			}
			mu.Unlock()
			select {
			case wake <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		defer close(ch)
		for {
			mu.Lock()
			next, ok, done := "", len(pending) > 0, closed
			if ok {
				next, pending = pending[0], pending[1:]
			}
			mu.Unlock()
			switch {
			case ok:
				select {
				case ch <- next:
				case <-stop:
					return
				}
			case done:
				return
			default:
				<-wake
			}
		}
	}()
	s.msgs = ch
	return ch
}

// wait returns the exit status of the running start once it exits (-1
// for a signal).
func (s *fakeSystemd) wait() int {
	err := <-s.exited
	s.exited <- err // for the cleanup
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	s.t.Fatal(err)
	return 0
}

// restarts says whether systemd restarts the unit after status.
func (s *fakeSystemd) restarts(status int) bool {
	if slices.Contains(s.unit.forceRestart, status) {
		return true
	}
	return status != 0 && !slices.Contains(s.unit.success, status)
}

// run starts the service and restarts it as systemd would until a start
// is READY; it fails the test if systemd would not restart it.
func (s *fakeSystemd) run() {
	s.t.Helper()
	for !s.start() {
		status := 0
		if s.cmd.ProcessState != nil {
			status = s.cmd.ProcessState.ExitCode()
		}
		if status == 0 && s.cmd.ProcessState != nil && s.cmd.ProcessState.Success() {
			s.t.Fatalf("start %d exited 0 before READY; Restart=on-failure would not restart it\n%s", s.starts, s.log())
		}
	}
}

// exitAndRestart waits for the running daemon to exit and, as systemd
// would, runs it again until READY.
func (s *fakeSystemd) exitAndRestart() int {
	s.t.Helper()
	status := s.wait()
	if !s.restarts(status) {
		s.t.Fatalf("the daemon exited %d, which the unit does not restart\n%s", status, s.log())
	}
	s.run()
	return status
}

// until reads the current start's sd_notify messages until one has
// prefix.
func (s *fakeSystemd) until(prefix string) {
	s.t.Helper()
	for {
		select {
		case m, ok := <-s.msgs:
			if !ok {
				s.t.Fatalf("the notify socket closed before %q", prefix)
			}
			if strings.HasPrefix(m, prefix) {
				return
			}
		case err := <-s.exited:
			s.exited <- err
			s.t.Fatalf("the daemon exited before it said %q\n%s", prefix, s.log())
		}
	}
}

// stop sends SIGTERM (systemctl stop) and waits for a clean exit.
func (s *fakeSystemd) stop() {
	s.t.Helper()
	s.cmd.Process.Signal(syscall.SIGTERM)
	if st := s.wait(); st != 0 {
		s.t.Fatalf("stop: exit %d\n%s", st, s.log())
	}
}

// log is every start's output, for a failure message.
func (s *fakeSystemd) log() string {
	var b strings.Builder
	for i, p := range s.logs {
		out, _ := os.ReadFile(p)
		fmt.Fprintf(&b, "--- start %d\n%s", i+1, out)
	}
	return b.String()
}

// lastLog is the output of the current start.
func (s *fakeSystemd) lastLog() string {
	out, _ := os.ReadFile(s.logs[len(s.logs)-1])
	return string(out)
}

const (
	oldVersion = "v0.1.0"
	newVersion = "v0.2.0"
)

// updateBox is a box under the fake systemd: the packaged binary is
// oldVersion, its release key in release.pub beside its config.
type updateBox struct {
	t              *testing.T
	dir, data, cfg string
	pub            minisign.PublicKey
	priv           minisign.PrivateKey
	sd             *fakeSystemd
	qbx            func(want int, args ...string) string
}

func newUpdateBox(t *testing.T) *updateBox {
	old := buildtest.Build(t, buildtest.Variant{Version: oldVersion})
	dir := daemontest.ShortDir(t)
	b := &updateBox{t: t, dir: dir, data: filepath.Join(dir, "data"), cfg: filepath.Join(dir, "questbox.toml")}
	if err := os.WriteFile(b.cfg, []byte("[network]\nprobe = \"\"\n[daemon]\nlisten = \"127.0.0.1:0\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var err error
	if b.pub, b.priv, err = minisign.GenerateKey(rand.Reader); err != nil {
		t.Fatal(err)
	}
	pubText, _ := b.pub.MarshalText()
	if err := os.WriteFile(filepath.Join(dir, "release.pub"), append(pubText, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	b.qbx = binaryCLI(t, old, b.cfg, b.data)
	b.sd = newFakeSystemd(t, old, dir, "run", "--config", b.cfg, "--data", b.data, "--tick", "50ms", "--update-settle", "300ms")
	b.sd.run()
	b.qbx(0, "quest", "new", "keep", "--direction", "data that must survive every update")
	b.qbx(0, "scan", "q1", "a hypothesis written before the update")
	return b
}

// release writes bin as a release file, signed by key (none when nil),
// and returns its path.
func (b *updateBox) release(bin, name, version string, key *minisign.PrivateKey) string {
	b.t.Helper()
	body, err := os.ReadFile(bin)
	if err != nil {
		b.t.Fatal(err)
	}
	p := filepath.Join(b.dir, name)
	if err := os.WriteFile(p, body, 0o755); err != nil {
		b.t.Fatal(err)
	}
	if key != nil {
		sig, _, err := release.Sign(*key, body, version)
		if err != nil {
			b.t.Fatal(err)
		}
		if err := os.WriteFile(p+".minisig", sig, 0o644); err != nil {
			b.t.Fatal(err)
		}
	}
	return p
}

// update runs `questbox update FILE|URL`, wanting exit want; it returns
// stdout and stderr.
func (b *updateBox) update(want int, file string) string {
	b.t.Helper()
	code, out := b.runUpdate(file)
	if code != want {
		b.t.Fatalf("questbox update %s: exit %d, want %d\n%s", file, code, want, out)
	}
	return out
}

func (b *updateBox) updateCode(file string) int {
	code, _ := b.runUpdate(file)
	return code
}

func (b *updateBox) runUpdate(file string) (int, string) {
	b.t.Helper()
	cmd := exec.Command(b.sd.bin, "update", file, "--config", b.cfg, "--data", b.data)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		b.t.Fatal(err)
	}
	return code, string(out)
}

type versionView struct {
	Version, Committed, Rollback, Trial, Packaged string
	Last                                          string `json:"last_update"`
}

func (b *updateBox) version() versionView {
	var v versionView
	if err := json.Unmarshal([]byte(b.qbx(0, "version", "--json")), &v); err != nil {
		b.t.Fatal(err)
	}
	return v
}

// dataFiles lists the data directory's files to show that a refused
// update wrote none (the store's size changes as the daemon works).
// The agents' run logs (logs/) are left out: the demo quest keeps running
// while a test looks, and each of its runs writes one.
func (b *updateBox) dataFiles() []string {
	var out []string
	filepath.Walk(b.data, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.IsDir() && p == filepath.Join(b.data, "logs") {
			return filepath.SkipDir
		}
		if err == nil && !fi.IsDir() && fi.Mode().IsRegular() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// running says the current start logged that it runs version.
func (b *updateBox) running(version string) bool {
	return strings.Contains(b.sd.lastLog(), `msg="questbox is running" version=`+version)
}

// TestUpdateRefused: an unsigned release, one signed by another key and a
// correctly signed one for another machine are each refused, saying why,
// and the box does not change: the same daemon runs, no file is written.
func TestUpdateRefused(t *testing.T) {
	b := newUpdateBox(t)
	newer := buildtest.Build(t, buildtest.Variant{Version: newVersion})
	armv6 := buildtest.Build(t, buildtest.Variant{Version: newVersion, Arch: "arm", ARM: "6"})
	_, other, err := minisign.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	host := release.Host()
	pid := b.sd.cmd.Process.Pid
	before := b.dataFiles()
	for _, tc := range []struct {
		name, file, say string
	}{
		{"unsigned", b.release(newer, "unsigned", newVersion, nil), "the release is not signed"},
		{"another key", b.release(newer, "otherkey", newVersion, &other), "the release is signed by another key"},
		{"armv6 on this machine", b.release(armv6, "armv6", newVersion, &b.priv), "signed for linux/arm/v6, this box is " + host.String()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := b.update(exitUsage, tc.file)
			if !strings.Contains(out, "refused, nothing changed") || !strings.Contains(out, tc.say) {
				t.Errorf("update said %q, want it refused saying %q", out, tc.say)
			}
		})
	}
	if after := b.dataFiles(); !slices.Equal(before, after) {
		t.Errorf("the data directory changed:\nbefore %v\nafter  %v", before, after)
	}
	if v := b.version(); v.Trial != "" || v.Committed != "" && v.Committed != oldVersion {
		t.Errorf("version after refusals: %+v", v)
	}
	if b.sd.cmd.ProcessState != nil || b.sd.cmd.Process.Pid != pid || b.sd.starts != 1 {
		t.Errorf("the daemon was restarted (%d starts)", b.sd.starts)
	}
	b.sd.stop()
}

// TestUpdateCommits: a good release, fetched from a URL (a loopback
// server), is started on trial through the daemon's own restart,
// committed once it has been READY and fed the watchdog for the settling
// time, and runs at every later start; the old version is kept for a
// rollback and the data is there.
func TestUpdateCommits(t *testing.T) {
	b := newUpdateBox(t)
	b.release(buildtest.Build(t, buildtest.Variant{Version: newVersion}), "questbox-linux", newVersion, &b.priv)
	srv := httptest.NewServer(http.FileServer(http.Dir(b.dir)))
	defer srv.Close()
	if code := b.updateCode(srv.URL + "/no-such-release"); code != exitUsage {
		t.Errorf("a URL that is not there: exit %d, want %d", code, exitUsage)
	}
	out := b.update(0, srv.URL+"/questbox-linux")
	if !strings.Contains(out, "the daemon restarts into it") {
		t.Errorf("update said %q", out)
	}
	if st := b.sd.exitAndRestart(); st != exitRestart {
		t.Errorf("the daemon exited %d to restart into the release, want %d", st, exitRestart)
	}
	if !b.running(newVersion) {
		t.Fatalf("after the update the daemon does not run %s\n%s", newVersion, b.sd.log())
	}
	if v := b.version(); v.Trial != newVersion {
		t.Errorf("before the settling time: %+v, want %s on trial", v, newVersion)
	}
	b.sd.until("STATUS=update to " + newVersion + " committed")
	v := b.version()
	if v.Committed != newVersion || v.Rollback != oldVersion || v.Trial != "" || !strings.Contains(v.Last, "committed") {
		t.Errorf("after the commit: %+v, want %s committed, %s kept for rollback", v, newVersion, oldVersion)
	}
	if !strings.Contains(b.qbx(0, "quest", "list"), "keep") {
		t.Error("the quest made before the update is gone")
	}
	b.sd.stop()
	b.sd.run()
	if !b.running(newVersion) {
		t.Errorf("the next start does not run the committed %s\n%s", newVersion, b.sd.lastLog())
	}
	b.sd.stop()
	b.qbx(0, "verify")
}

// TestUpdateRollsBack: a broken release — one that exits at start,
// migrates the store and crashes, hangs before READY, or panics after
// READY — is started on trial, and the product's own start-up logic,
// restarted by (a stand-in for) systemd as the unit says, brings back the
// previous version with the store as it was, within the unit's start
// limit.
func TestUpdateRollsBack(t *testing.T) {
	for _, fault := range []string{"start", "store", "ready", "after-ready"} {
		t.Run(fault, func(t *testing.T) {
			b := newUpdateBox(t)
			broken := buildtest.Build(t, buildtest.Variant{Version: newVersion, Tags: "updatefault", X: "github.com/questbox/questbox/internal/daemon.fault=" + fault})
			b.update(0, b.release(broken, "questbox-broken", newVersion, &b.priv))
			if st := b.sd.wait(); st != exitRestart {
				t.Fatalf("the daemon exited %d to restart into the release, want %d", st, exitRestart)
			}
			// Restart as systemd would until a start is READY and not a
			// trial start (whatever it is: the assertions below judge it).
			for {
				if b.sd.start() && !strings.Contains(b.sd.lastLog(), "on trial") {
					break
				}
				st := b.sd.wait()
				if !b.sd.restarts(st) {
					t.Fatalf("the broken release exited %d, which the unit does not restart\n%s", st, b.sd.log())
				}
			}
			if all := b.sd.log(); fault == "store" && (!strings.Contains(all, "fault: migrated the store") || strings.Contains(all, "fault: migrate:")) {
				t.Fatalf("the broken release did not migrate the store:\n%s", all)
			}
			if !b.running(oldVersion) || !strings.Contains(b.sd.lastLog(), "update to "+newVersion+" rolled back") {
				t.Errorf("the journal does not say the update was rolled back:\n%s", b.sd.lastLog())
			}
			v := b.version()
			if v.Trial != "" || v.Committed != oldVersion || !strings.Contains(v.Last, "rolled back") {
				t.Errorf("after the rollback: %+v", v)
			}
			// The LEDs say it once the start-up chase (BootChase) is over:
			// red blinks fast (a fault) until the next start.
			var dev api.Device
			waitFor(t, "the start-up chase to end", func() bool {
				if err := json.Unmarshal([]byte(b.qbx(0, "device", "status", "--json")), &dev); err != nil {
					t.Fatal(err)
				}
				return !dev.State.Starting
			})
			if !strings.Contains(dev.State.Fault, "update rolled back") || dev.Red.Pattern != "blink 4Hz" {
				t.Errorf("the LEDs after the rollback: red %q, fault %q; want a fault saying the update was rolled back", dev.Red.Pattern, dev.State.Fault)
			}
			if !strings.Contains(b.qbx(0, "quest", "list"), "keep") {
				t.Error("the quest made before the update is gone")
			}
			b.sd.stop()
			b.qbx(0, "verify")
		})
	}
}

var dashboardLog = regexp.MustCompile(`msg="dashboard listening" url=(\S+)`)

// dashboard logs in to the current start's dashboard with the password
// the first start generated, and returns a client with the session and
// the dashboard's URL and CSRF token.
func (b *updateBox) dashboard() (*http.Client, string, string) {
	t := b.t
	t.Helper()
	pw := firstPassword(t, b.data)
	u := dashboardLog.FindStringSubmatch(b.sd.lastLog())
	if u == nil {
		t.Fatalf("no dashboard URL in the log:\n%s", b.sd.log())
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	body, _ := json.Marshal(map[string]string{"password": pw})
	resp, err := c.Post(u[1]+"login", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sess struct{ CSRF string }
	if err := json.NewDecoder(resp.Body).Decode(&sess); err != nil || sess.CSRF == "" {
		t.Fatalf("login: %s, %v", resp.Status, err)
	}
	return c, u[1], sess.CSRF
}

// upload posts a release file (and its .minisig, when there is one) to
// the dashboard as its page does; it returns the status and the body.
func upload(t *testing.T, c *http.Client, url, csrf, file string) (int, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for part, p := range map[string]string{"binary": file, "signature": file + ".minisig"} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		w, _ := mw.CreateFormFile(part, filepath.Base(p))
		w.Write(b)
	}
	mw.Close()
	req, _ := http.NewRequest(http.MethodPost, url+"api/update", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if csrf != "" {
		req.Header.Set("X-CSRF-Token", csrf)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

// TestUpdateFromTheDashboard: the dashboard's upload is behind the
// session and its CSRF token, refuses an unsigned release with nothing
// changed, and installs a signed one as `questbox update` does: the
// daemon restarts into it and commits it; the dashboard then shows the
// running version and the one kept for rollback.
func TestUpdateFromTheDashboard(t *testing.T) {
	b := newUpdateBox(t)
	newer := buildtest.Build(t, buildtest.Variant{Version: newVersion})
	good := b.release(newer, "questbox-good", newVersion, &b.priv)
	unsigned := b.release(newer, "questbox-unsigned", newVersion, nil)
	c, url, csrf := b.dashboard()
	before := b.dataFiles()

	if code, body := upload(t, http.DefaultClient, url, "", good); code != http.StatusUnauthorized {
		t.Errorf("without a session: %d %s, want 401", code, body)
	}
	if code, body := upload(t, c, url, "", good); code != http.StatusForbidden || !strings.Contains(body, "X-CSRF-Token") {
		t.Errorf("without the CSRF token: %d %s, want 403", code, body)
	}
	if code, body := upload(t, c, url, csrf, unsigned); code != http.StatusBadRequest || !strings.Contains(body, "the release is not signed") {
		t.Errorf("unsigned: %d %s, want 400 saying it is not signed", code, body)
	}
	if after := b.dataFiles(); !slices.Equal(before, after) || b.sd.starts != 1 {
		t.Fatalf("a refused upload changed the box:\nbefore %v\nafter  %v", before, after)
	}

	code, body := upload(t, c, url, csrf, good)
	if code != http.StatusOK || !strings.Contains(body, `"trial": "`+newVersion+`"`) {
		t.Fatalf("a signed release: %d %s", code, body)
	}
	if st := b.sd.exitAndRestart(); st != exitRestart {
		t.Errorf("the daemon exited %d to restart into the release, want %d", st, exitRestart)
	}
	b.sd.until("STATUS=update to " + newVersion + " committed")
	c, url, _ = b.dashboard()
	resp, err := c.Get(url + "api/update")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st api.UpdateStatus
	json.NewDecoder(resp.Body).Decode(&st)
	if st.Running != newVersion || st.Committed != newVersion || st.Rollback != oldVersion {
		t.Errorf("the dashboard shows %+v, want %s running and committed, %s kept for rollback", st, newVersion, oldVersion)
	}
	b.sd.stop()
}
