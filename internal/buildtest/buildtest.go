// Package buildtest builds the questbox binary for tests that run it as a
// process (signals, the control socket, a daemon killed mid-write), once
// per test binary.
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
)

// Questbox returns the path of cmd/questbox built from this module, as it
// ships (CGO off), building it at the first call of the test binary.
// Under -short the test is skipped: the build takes seconds (make test
// never passes -short). TestMain calls Cleanup to remove it.
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
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/questbox")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err = cmd.CombinedOutput()
}

// Cleanup removes the binary Questbox built, if it built one. Call it from
// TestMain after m.Run.
func Cleanup() {
	if dir != "" {
		os.RemoveAll(dir)
	}
	variantsMu.Lock()
	defer variantsMu.Unlock()
	if variantDir != "" {
		os.RemoveAll(variantDir)
	}
}
