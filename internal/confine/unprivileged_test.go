//go:build linux

package confine

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/questbox/questbox/internal/buildtest"
)

// unprivileged is the uid and gid the confinement is tested as when the
// tests run as root: nobody's.
const unprivileged = 65534

// The same checks hold for a daemon that runs as a user that is not
// root (as under `make run` as a normal user, or the service's user):
// run as root, this test runs them again in a copy of the test binary
// started as uid 65534, which then is the daemon, with the small launcher
// beside it as the daemon finds it when installed.
func TestAsUnprivilegedUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("this run is already unprivileged: the other tests are the check")
	}
	dir, err := os.MkdirTemp("", "qbconfine")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "confine.test")
	copyFile(t, exe, bin)
	launcher := filepath.Join(dir, LauncherName)
	copyFile(t, buildtest.Launcher(t), launcher)
	for _, p := range []string{dir, bin, launcher} {
		if err := os.Chown(p, unprivileged, unprivileged); err != nil {
			t.Fatal(err)
		}
	}
	tests := []string{"TestConfinedAgent", "TestGrandchildEndsWithTheRun", "TestProbeReportsWhatItCouldNotApply", "TestRunFailsWhenALayerFails"}
	cmd := exec.Command(bin, "-test.run=^("+strings.Join(tests, "|")+")$", "-test.v", "-test.count=1")
	cmd.Env = []string{"TMPDIR=" + dir, "PATH=" + os.Getenv("PATH"), "CI=" + os.Getenv("CI")}
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: unprivileged, Gid: unprivileged}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as uid %d: %v\n%s", unprivileged, err, out)
	}
	for _, name := range tests {
		if !strings.Contains(string(out), "--- PASS: "+name) {
			t.Errorf("as uid %d, %s did not pass:\n%s", unprivileged, name, out)
		}
	}
	if !strings.Contains(string(out), "; launcher "+launcher+"\n") {
		t.Errorf("as uid %d, the runs were not launched by %s:\n%s", unprivileged, launcher, out)
	}
	if !strings.Contains(string(out), "namespaces (user, pid, mount, ipc)") {
		failOrSkip(t, "as uid %d the namespaces were not applied (the kernel forbids unprivileged user namespaces?):\n%s", unprivileged, out)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}
