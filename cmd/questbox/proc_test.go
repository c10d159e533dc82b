package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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

// startBinaryDaemon starts the built binary's daemon with a one-second tick, its
// output appended to dir/daemon.log, and kills it when the test ends.
func startBinaryDaemon(t *testing.T, bin, cfg, data, dir string) *exec.Cmd {
	t.Helper()
	d := exec.Command(bin, "run", "--config", cfg, "--data", data, "--tick", "1s")
	logf, err := os.OpenFile(filepath.Join(dir, "daemon.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logf.Close() })
	d.Stdout, d.Stderr = logf, logf
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Process.Kill(); d.Wait() })
	return d
}

// waitForPID waits, as waitFor does, until file holds a process id, and
// returns it.
func waitForPID(t *testing.T, what, file string) int {
	t.Helper()
	var pid int
	waitFor(t, what, func() bool {
		b, err := os.ReadFile(file)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	return pid
}
