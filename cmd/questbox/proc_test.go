package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The questbox binary for the tests that signal or kill a real process,
// built once per test run (static, as released) into binDir, which
// TestMain removes.
var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
	binOut  []byte
)

// buildQuestbox returns the path of the built binary; under -short the
// test is skipped (make test never passes -short).
func buildQuestbox(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "qbbin")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "questbox")
		build := exec.Command("go", "build", "-o", binPath, ".")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		binOut, binErr = build.CombinedOutput()
	})
	if binErr != nil {
		t.Fatalf("go build: %v\n%s", binErr, binOut)
	}
	return binPath
}

// binaryCLI returns a function that runs the built binary with --config
// cfg and --data data, fails the test unless it exits with want, and
// returns its stdout.
func binaryCLI(t *testing.T, bin, cfg, data string) func(want int, args ...string) string {
	return func(want int, args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, append(args, "--config", cfg, "--data", data)...)
		var errb strings.Builder
		cmd.Stderr = &errb
		out, err := cmd.Output()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != want {
			t.Fatalf("questbox %v: exit %d, want %d\n%s%s", args, code, want, out, errb.String())
		}
		return string(out)
	}
}
