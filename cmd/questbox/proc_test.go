package main

import (
	"os/exec"
	"strings"
	"testing"
)

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
