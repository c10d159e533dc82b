package ground

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"time"
)

// Exec is the real [Runner]: it runs argv directly (no shell), with the
// answer on stdin, an empty environment apart from PATH, and stdout capped.
// Safe for concurrent use.
type Exec struct {
	// Confine, when set, rewrites each program's command before it
	// starts, so that it runs confined (the daemon confines it as it
	// does agents: the program reads the agent's answer). It returns
	// what to call once the command has ended; an error stops the run
	// before it starts.
	Confine func(cmd *exec.Cmd) (cleanup func(), err error)
	// MaxStdout is the most stdout bytes kept (default 64 KiB).
	MaxStdout int
	// Dir is the working directory (default: the daemon's).
	Dir string
	// Path is the PATH the program sees (default "/usr/local/bin:/usr/bin:/bin").
	Path string
}

// capped is an io.Writer that keeps the first n bytes and discards the rest.
type capped struct {
	buf bytes.Buffer
	n   int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.n - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// Run implements [Runner].
func (e Exec) Run(ctx context.Context, argv []string, stdin []byte) (RunResult, error) {
	if len(argv) == 0 {
		return RunResult{}, errors.New("ground: run: empty argv")
	}
	maxOut := e.MaxStdout
	if maxOut <= 0 {
		maxOut = 64 << 10
	}
	path := e.Path
	if path == "" {
		path = "/usr/local/bin:/usr/bin:/bin"
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = e.Dir
	cmd.Env = []string{"PATH=" + path}
	cmd.Stdin = bytes.NewReader(stdin)
	out := &capped{n: maxOut}
	cmd.Stdout = out
	cmd.WaitDelay = time.Second // do not wait forever on a child holding stdout
	if e.Confine != nil {
		cleanup, err := e.Confine(cmd)
		if err != nil {
			return RunResult{}, fmt.Errorf("ground: run %q: %w", argv[0], err)
		}
		defer cleanup()
	}
	if err := cmd.Start(); err != nil {
		return RunResult{}, fmt.Errorf("ground: run %q: %w", argv[0], err)
	}
	err := cmd.Wait()
	res := RunResult{Stdout: out.buf.String(), ExitCode: cmd.ProcessState.ExitCode()}
	if ctx.Err() != nil {
		res.TimedOut, res.ExitCode = true, -1
		return res, nil
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return res, fmt.Errorf("ground: run %q: %w", argv[0], err)
	}
	return res, nil
}
