//go:build linux

package agent

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func mustNewCommand(t *testing.T, cfg CommandConfig) *Command {
	t.Helper()
	if cfg.Timeout == 0 {
		cfg.Timeout = testTimeout
	}
	if cfg.OutputCap == 0 {
		cfg.OutputCap = 1 << 20
	}
	if cfg.Env == nil {
		cfg.Env = []string{"PATH"}
	}
	c, err := NewCommand(cfg)
	if err != nil {
		t.Fatalf("NewCommand(%+v): %v", cfg, err)
	}
	return c
}

func shell(script string, args ...string) []string {
	return append([]string{"sh", "-c", script, "sh"}, args...)
}

// waitGone blocks until the process pid has exited (or does not exist). It
// waits on a pidfd, which becomes readable when the process terminates, so
// the test synchronises on the event itself rather than on elapsed time.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return
	}
	if errors.Is(err, unix.ENOSYS) {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI's kernel has pidfd_open (Linux 5.3+), and this check needs it")
		}
		t.Skip("kernel without pidfd_open")
	}
	if err != nil {
		t.Fatalf("pidfd_open(%d): %v", pid, err)
	}
	defer unix.Close(fd)
	for {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int((10 * time.Second).Milliseconds()))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			t.Fatalf("poll pidfd: %v", err)
		}
		if n == 0 {
			t.Fatalf("process %d is still running: its process group was not killed", pid)
		}
		return
	}
}

func parsePid(t *testing.T, out []byte) int {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil || pid <= 0 {
		t.Fatalf("want a pid on stdout, got %q", out)
	}
	return pid
}

func TestCommandEchoesStdin(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB: more than any pipe buffer
	tests := []struct {
		name   string
		prompt string
	}{
		{"empty", ""},
		{"text", "find the best OCR\nfor Japanese invoices — 請求書\n"},
		{"1MiB", big},
	}
	c := mustNewCommand(t, CommandConfig{Name: "cat", Argv: []string{"cat"}, OutputCap: 2 << 20})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := Request{Prompt: tt.prompt}
			got, err := c.Run(context.Background(), req)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if string(got.Output) != tt.prompt {
				t.Errorf("Output: got %d bytes, want the %d-byte prompt back", len(got.Output), len(tt.prompt))
			}
			if got.Truncated {
				t.Errorf("Truncated: got true, want false")
			}
			if got.Cap != 2<<20 {
				t.Errorf("Cap: got %d, want %d", got.Cap, 2<<20)
			}
			if want := EstimateTokens(tt.prompt, got.Output); got.Tokens != want || got.TokensReported {
				t.Errorf("Tokens: got %d reported=%v, want %d estimated", got.Tokens, got.TokensReported, want)
			}
		})
	}
}

func TestCommandChildIgnoringStdin(t *testing.T) {
	c := mustNewCommand(t, CommandConfig{Argv: shell("echo done")})
	got, err := c.Run(context.Background(), Request{Prompt: strings.Repeat("x", 1<<20)})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if string(got.Output) != "done\n" {
		t.Errorf("Output: got %q, want %q", got.Output, "done\n")
	}
}

func TestCommandEnvAllowList(t *testing.T) {
	t.Setenv("QB_TEST_ALLOWED", "yes")
	t.Setenv("QB_TEST_SECRET", "leaked")
	c := mustNewCommand(t, CommandConfig{
		Argv: []string{"env"},
		Env:  []string{"QB_TEST_ALLOWED", "QB_TEST_NOT_SET"},
	})
	got, err := c.Run(context.Background(), Request{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	// env prints the whole environment: exactly the one allowed variable
	// that is set, and nothing inherited (not even PATH, which is not listed).
	if want := "QB_TEST_ALLOWED=yes\n"; string(got.Output) != want {
		t.Errorf("child environment: got %q, want %q", got.Output, want)
	}
}

func TestCommandTimeoutKillsProcessGroup(t *testing.T) {
	t.Parallel()
	// The grandchild holds stdout; unless the whole group dies, Run would
	// wait for it and the grandchild would survive.
	c := mustNewCommand(t, CommandConfig{
		Name:    "sleeper",
		Argv:    shell("sleep 1000 & echo $!; wait"),
		Timeout: time.Second,
	})
	got, err := c.Run(context.Background(), Request{})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("Run error: got %v, want ErrTimeout", err)
	}
	if !strings.Contains(err.Error(), `"sleeper"`) {
		t.Errorf("error %q does not name the provider", err)
	}
	waitGone(t, parsePid(t, got.Output))
}

func TestCommandCancelKillsProcessGroup(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pid")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// O_RDWR does not wait for a writer; closing it unblocks the read below.
	pidPipe, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer pidPipe.Close()

	c := mustNewCommand(t, CommandConfig{Argv: shell(`sleep 1000 & echo $! > "$1"; wait`, fifo)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		reply Reply
		err   error
	}
	done := make(chan result, 1)
	go func() {
		r, err := c.Run(ctx, Request{})
		done <- result{r, err}
	}()

	line, err := bufio.NewReader(pidPipe).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the grandchild's pid: %v", err)
	}
	pid := parsePid(t, []byte(line))
	cancel()
	res := <-done
	if !errors.Is(res.err, context.Canceled) {
		t.Fatalf("Run error: got %v, want context.Canceled", res.err)
	}
	if errors.Is(res.err, ErrTimeout) {
		t.Errorf("Run error %v: a cancellation is not a timeout", res.err)
	}
	waitGone(t, pid)
}

func TestCommandLeaderExitReapsGroup(t *testing.T) {
	// The leader exits at once, leaving a background grandchild that holds
	// stdout open. Run must neither hang on it nor leave it running.
	c := mustNewCommand(t, CommandConfig{Argv: shell("sleep 1000 & echo $!")})
	got, err := c.Run(context.Background(), Request{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	waitGone(t, parsePid(t, got.Output))
}

func TestCommandEscapedProcessDoesNotHangRun(t *testing.T) {
	t.Parallel()
	// setsid puts the sleeper outside the group, beyond the group kill; it
	// holds stdout open. Run must stop listening to it and return.
	c := mustNewCommand(t, CommandConfig{Argv: shell("setsid sleep 1000 & echo $!")})
	got, err := c.Run(context.Background(), Request{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	pid := parsePid(t, got.Output)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Errorf("killing the escaped sleeper %d: %v", pid, err)
	}
	waitGone(t, pid)
}

func TestCommandOutputCapped(t *testing.T) {
	const total = 50 << 20
	const outCap = 1 << 20
	c := mustNewCommand(t, CommandConfig{
		Argv:      shell(fmt.Sprintf("head -c %d /dev/zero", total)),
		OutputCap: outCap,
	})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := c.Run(context.Background(), Request{})
	runtime.ReadMemStats(&after)
	// head exits 0 only if all 50 MB were read: the excess was drained, not
	// left to block the child.
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(got.Output) != outCap {
		t.Errorf("len(Output): got %d, want %d", len(got.Output), outCap)
	}
	if !got.Truncated {
		t.Errorf("Truncated: got false, want true")
	}
	if !bytes.Equal(got.Output, make([]byte, outCap)) {
		t.Errorf("Output is not the first %d bytes of the stream", outCap)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("Run allocated %d bytes for a %d-byte stream capped at %d: memory is not bounded by the cap", alloc, total, outCap)
	}
}

func TestCommandNotFound(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "not-executable")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		argv string
	}{
		{"not on PATH", "questbox-no-such-agent"},
		{"missing path", filepath.Join(dir, "missing")},
		{"not executable", notExec},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewCommand(CommandConfig{Name: "p", Argv: []string{tt.argv}, Timeout: time.Second, OutputCap: 1})
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("NewCommand error: got %v, want ErrNotFound", err)
			}
			if !strings.Contains(err.Error(), tt.argv) {
				t.Errorf("error %q does not name %q", err, tt.argv)
			}
		})
	}
}

func TestCommandNotFoundAtRun(t *testing.T) {
	dir := t.TempDir()
	agent := filepath.Join(dir, "questbox-test-agent")
	if err := os.WriteFile(agent, []byte("#!/bin/sh\necho ok\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	c := mustNewCommand(t, CommandConfig{Argv: []string{"questbox-test-agent"}})
	if _, err := c.Run(context.Background(), Request{}); err != nil {
		t.Fatalf("Run before removal: %v", err)
	}
	if err := c.Check(); err != nil {
		t.Fatalf("Check before removal: %v", err)
	}
	if err := os.Remove(agent); err != nil {
		t.Fatal(err)
	}
	if err := c.Check(); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "questbox-test-agent") {
		t.Errorf("Check after removal: got %v, want ErrNotFound naming the executable", err)
	}
	_, err := c.Run(context.Background(), Request{})
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("Run after removal: got %v, want ErrNotFound", err)
	}
	if !strings.Contains(err.Error(), "questbox-test-agent") {
		t.Errorf("error %q does not name the executable", err)
	}
}

func TestCommandRelativeToDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "agent.sh"), []byte("#!/bin/sh\npwd\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := mustNewCommand(t, CommandConfig{Argv: []string{"./agent.sh"}, Dir: dir})
	got, err := c.Run(context.Background(), Request{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if want := dir + "\n"; string(got.Output) != want {
		t.Errorf("Output: got %q, want %q", got.Output, want)
	}
}

func TestCommandNonZeroExit(t *testing.T) {
	c := mustNewCommand(t, CommandConfig{
		Name: "failing",
		Argv: shell(`echo partial; i=0; while [ $i -lt 100 ]; do echo "noise $i" >&2; i=$((i+1)); done; echo "boom: bad model" >&2; exit 3`),
	})
	got, err := c.Run(context.Background(), Request{})
	if err == nil {
		t.Fatal("Run: got nil error, want exit status 3")
	}
	for _, want := range []string{`"failing"`, "exited with status 3", "boom: bad model", "noise 99"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "noise 0\n") {
		t.Errorf("error %q quotes all of stderr, want only its tail", err)
	}
	for _, sentinel := range []error{ErrUnavailable, ErrTimeout, ErrNotFound} {
		if errors.Is(err, sentinel) {
			t.Errorf("error %q wraps %v; a non-zero exit is the agent's failure", err, sentinel)
		}
	}
	if string(got.Output) != "partial\n" {
		t.Errorf("Output: got %q, want %q", got.Output, "partial\n")
	}
}

func TestCommandCancelledBeforeRun(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	c := mustNewCommand(t, CommandConfig{Argv: shell(`touch "$1"`, marker)})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Run(ctx, Request{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: got %v, want context.Canceled", err)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the command ran although ctx was already cancelled (stat: %v)", err)
	}
}

func TestCommandConcurrentRuns(t *testing.T) {
	c := mustNewCommand(t, CommandConfig{Argv: []string{"cat"}})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			prompt := fmt.Sprintf("prompt %d\n", i)
			got, err := c.Run(context.Background(), Request{Prompt: prompt})
			if err != nil {
				t.Errorf("Run %d: %v", i, err)
				return
			}
			if string(got.Output) != prompt {
				t.Errorf("Run %d: got %q, want %q", i, got.Output, prompt)
			}
		})
	}
	wg.Wait()
}

func TestNewCommandValidates(t *testing.T) {
	ok := CommandConfig{Name: "p", Argv: []string{"cat"}, Timeout: time.Second, OutputCap: 1}
	tests := []struct {
		name   string
		modify func(*CommandConfig)
		want   string
	}{
		{"empty argv", func(c *CommandConfig) { c.Argv = nil }, "empty argv"},
		{"empty argv[0]", func(c *CommandConfig) { c.Argv = []string{""} }, "empty argv"},
		{"zero timeout", func(c *CommandConfig) { c.Timeout = 0 }, "timeout must be positive"},
		{"negative timeout", func(c *CommandConfig) { c.Timeout = -time.Second }, "timeout must be positive"},
		{"zero cap", func(c *CommandConfig) { c.OutputCap = 0 }, "output cap"},
		{"huge cap", func(c *CommandConfig) { c.OutputCap = MaxOutputCap + 1 }, "output cap"},
		{"env with =", func(c *CommandConfig) { c.Env = []string{"A=b"} }, `"A=b"`},
		{"empty env name", func(c *CommandConfig) { c.Env = []string{""} }, "environment variable name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ok
			tt.modify(&cfg)
			_, err := NewCommand(cfg)
			if err == nil {
				t.Fatalf("NewCommand: got nil error, want one containing %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewCommand error: got %q, want it to contain %q", err, tt.want)
			}
		})
	}
	if _, err := NewCommand(ok); err != nil {
		t.Errorf("NewCommand(valid): %v", err)
	}
}

func TestCommandDoesNotAliasConfig(t *testing.T) {
	argv := []string{"echo", "original"}
	c := mustNewCommand(t, CommandConfig{Argv: argv})
	argv[1] = "changed"
	got, err := c.Run(context.Background(), Request{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if string(got.Output) != "original\n" {
		t.Errorf("Output: got %q, want %q", got.Output, "original\n")
	}
}

// All of stderr reaches Request.Log, not only the tail the error quotes;
// the exit status is in the Reply; Request.Dir is where the command runs.
func TestCommandStderrToLogAndProjectDir(t *testing.T) {
	project := t.TempDir()
	c := mustNewCommand(t, CommandConfig{Name: "logging", Dir: t.TempDir(),
		Argv: shell(`pwd; i=0; while [ $i -lt 5000 ]; do echo "line $i" >&2; i=$((i+1)); done; exit 3`)})
	var log bytes.Buffer
	got, err := c.Run(context.Background(), Request{Log: &log, Dir: project})
	if err == nil {
		t.Fatal("Run: got nil error, want exit status 3")
	}
	var want strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&want, "line %d\n", i)
	}
	if log.String() != want.String() {
		t.Errorf("Log got %d bytes, want all %d of stderr", log.Len(), want.Len())
	}
	if got.ExitCode != 3 || got.StderrBytes != int64(want.Len()) {
		t.Errorf("ExitCode %d, StderrBytes %d; want 3, %d", got.ExitCode, got.StderrBytes, want.Len())
	}
	if string(got.Output) != project+"\n" {
		t.Errorf("ran in %q, want the project %q", got.Output, project)
	}
}

// firstWrite closes started at its first Write.
type firstWrite struct {
	once    sync.Once
	started chan struct{}
}

func (w *firstWrite) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.started) })
	return len(p), nil
}

// A run in flight whose prompt fits in the stdin pipe costs three
// goroutines: the caller's (it reads stdout), stderr's reader and the
// exit's waiter; no stdin writer, no os/exec context watcher, no drain.
func TestCommandRunGoroutines(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "release")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	c := mustNewCommand(t, CommandConfig{Argv: shell(`cat; echo started >&2; read x < "$1"`, fifo)})
	log := &firstWrite{started: make(chan struct{})}
	before := runtime.NumGoroutine()
	type ran struct {
		reply Reply
		err   error
	}
	done := make(chan ran, 1)
	go func() {
		reply, err := c.Run(context.Background(), Request{Prompt: "hello\n", Log: log})
		done <- ran{reply, err}
	}()
	<-log.started // the child read its prompt and waits on the fifo
	during := runtime.NumGoroutine() - before
	release, err := os.OpenFile(fifo, os.O_WRONLY, 0) // blocks until the child opens it
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(release, "go")
	release.Close()
	r := <-done
	if r.err != nil || string(r.reply.Output) != "hello\n" {
		t.Fatalf("Run: got %q, %v; want the prompt echoed", r.reply.Output, r.err)
	}
	if during > 3 {
		t.Errorf("a run in flight had %d goroutines, want at most 3", during)
	}
}
