package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/internal/buildtest"
	"github.com/questbox/questbox/internal/confine"
)

func TestMain(m *testing.M) {
	// The test binary is the launcher of the agents the tests' daemons
	// confine.
	confine.Main()
	// The tests name their data dir and config explicitly; nothing from the
	// invoking shell may leak in.
	for _, k := range []string{"QUESTBOX_DATA", "QUESTBOX_CONFIG", "NOTIFY_SOCKET"} {
		os.Unsetenv(k)
	}
	// Nor the machine's network or its /etc/questbox: a test that names no
	// config gets the defaults with the network probe off (always online),
	// so the LEDs and the events do not depend on whether 1.1.1.1 answers.
	dir, err := os.MkdirTemp("", "qbconf")
	if err != nil {
		panic(err)
	}
	conf := filepath.Join(dir, "questbox.toml")
	// Nor a fixed port: every daemon's dashboard listens on a free one.
	// No memory limit: the in-process daemons would set it for the whole
	// test process, which holds many of them and the race detector's
	// heap (memlimit_test.go tests the limit).
	if err := os.WriteFile(conf, []byte("[network]\nprobe = \"\"\n[daemon]\nlisten = \"127.0.0.1:0\"\nmemory_limit = \"off\"\n"), 0o644); err != nil {
		panic(err)
	}
	os.Setenv("QUESTBOX_CONFIG", conf)
	code := m.Run()
	os.RemoveAll(dir)
	buildtest.Cleanup()
	os.Exit(code)
}

// result is what one in-process invocation of the CLI did.
type result struct {
	code           int
	stdout, stderr string
}

// qb runs the CLI in-process, as main does, with stdin as its input.
func qb(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	code := report(&errb, err)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// must runs the CLI and fails the test unless it exits with want.
func must(t *testing.T, want int, stdin string, args ...string) result {
	t.Helper()
	r := qb(t, stdin, args...)
	if r.code != want {
		t.Fatalf("questbox %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, want, r.stdout, r.stderr)
	}
	return r
}

// decode parses JSON output into v.
func decode(t *testing.T, r result, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, r.stdout)
	}
}

// dataDir is a fresh data directory whose store, if one was created, must
// pass `questbox verify` when the test ends.
func dataDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Cleanup(func() {
		if _, err := os.Stat(filepath.Join(dir, engine.StoreFile)); err != nil {
			return
		}
		if r := qb(t, "", "verify", "--data", dir); r.code != 0 {
			t.Errorf("verify after the test: exit %d: %s", r.code, r.stderr)
		}
	})
	return dir
}

func answer(verdict, evidence string, dirs ...string) string {
	if dirs == nil {
		dirs = []string{}
	}
	b, _ := json.Marshal(map[string]any{"verdict": verdict, "evidence": evidence, "citations": []any{}, "new_directions": dirs})
	return "My findings.\n```json\n" + string(b) + "\n```\n"
}
