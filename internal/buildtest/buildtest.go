// Package buildtest builds the questbox binary for tests that run it as a
// process (signals, the control socket, a daemon killed mid-write), and
// its launcher questbox-confine, once per test binary.
package buildtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	once sync.Once
	dir  string // guarded by once
	bin  string
	err  error
	out  []byte

	launcherOnce sync.Once
	launcherDir  string // guarded by launcherOnce
	launcherBin  string
	launcherErr  error
	launcherOut  []byte
)

// Questbox returns the path of cmd/questbox built from this module, as it
// ships (CGO off), with cmd/questbox-confine, its launcher, built with it
// and beside it (questbox-confine in the same directory), building them
// at the first call of the test binary. A test that copies the binary
// elsewhere copies the launcher too, or its daemon launches its runs
// itself. Under -short the test is skipped: the build takes seconds (make
// test never passes -short). TestMain calls Cleanup to remove them.
func Questbox(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the questbox binary")
	}
	once.Do(build)
	if err != nil {
		t.Fatalf("go build ./cmd/questbox: %v\n%s", err, out)
	}
	return bin
}

func build() {
	var gomod []byte
	if gomod, err = exec.Command("go", "env", "GOMOD").Output(); err != nil {
		return
	}
	if dir, err = os.MkdirTemp("", "qbbin"); err != nil {
		return
	}
	bin = filepath.Join(dir, "questbox")
	// One go build: the two binaries are of one build, as the launcher's
	// check wants (internal/confine).
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "./cmd/questbox", "./cmd/questbox-confine")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err = cmd.CombinedOutput()
}

// Launcher returns the path of cmd/questbox-confine built for a test
// binary that is the daemon (it confines commands through
// internal/confine): of the test binary's build, so built without the
// version control stamp a test binary never has, else the daemon would
// take it for a launcher of another build. It is built at the first call
// of the test binary, skipped under -short, and removed by Cleanup.
func Launcher(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the questbox-confine binary")
	}
	launcherOnce.Do(buildLauncher)
	if launcherErr != nil {
		t.Fatalf("go build ./cmd/questbox-confine: %v\n%s", launcherErr, launcherOut)
	}
	return launcherBin
}

func buildLauncher() {
	var gomod []byte
	if gomod, launcherErr = exec.Command("go", "env", "GOMOD").Output(); launcherErr != nil {
		return
	}
	if launcherDir, launcherErr = os.MkdirTemp("", "qblauncher"); launcherErr != nil {
		return
	}
	launcherBin = filepath.Join(launcherDir, "questbox-confine")
	cmd := exec.Command("go", "build", "-buildvcs=false", "-o", launcherBin, "./cmd/questbox-confine")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	launcherOut, launcherErr = cmd.CombinedOutput()
}

// Cleanup removes the binary Questbox built, if it built one. Call it from
// TestMain after m.Run.
func Cleanup() {
	if dir != "" {
		os.RemoveAll(dir)
	}
	if launcherDir != "" {
		os.RemoveAll(launcherDir)
	}
	variantsMu.Lock()
	defer variantsMu.Unlock()
	if variantDir != "" {
		os.RemoveAll(variantDir)
	}
}
