package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"
)

// stderrKeep is how much of a command's stderr is kept (its last bytes) for
// error messages.
const stderrKeep = 64 << 10

// ioGrace bounds how long Run keeps reading after the command's process group
// is gone. Only a process that left the group (setsid, a daemon) can still
// hold the pipes then; Run stops reading from it rather than hang.
const ioGrace = time.Second

// CommandConfig configures a Command provider.
type CommandConfig struct {
	// Name is the provider's name in the config file, used in error messages.
	// Empty means argv[0].
	Name string
	// Argv is the command line. Argv[0] is looked up on the daemon's PATH
	// unless it contains a path separator; a relative path with a separator
	// is taken relative to Dir.
	Argv []string
	// Timeout bounds one Run; past it the whole process group is killed.
	Timeout time.Duration
	// OutputCap bounds the stdout kept, in bytes (at most MaxOutputCap). Output
	// beyond it is read and discarded, and the Reply is marked Truncated.
	OutputCap int64
	// Env is an allow-list of environment variable NAMES passed through from
	// the daemon's environment; every other variable is dropped. Note that
	// PATH and HOME are dropped too unless listed.
	Env []string
	// Dir is the working directory when a Request names no project;
	// empty means the quest's scratch directory when confined, else the
	// daemon's. A run writes only its project (or scratch) directory and
	// its temporary one, never Dir.
	Dir string
	// Format is how stdout is read: FormatText (the answer as printed),
	// FormatClaudeJSON or FormatCodexJSONL (the answer, tokens and cost
	// from the CLI's structured output).
	Format string
	// Write are directories every run may write besides its project (or
	// scratch) and temporary directories, e.g. the agent program's own
	// state directory; every run of the provider shares them. Only
	// confined runs are held to that.
	Write []string
	// Confine, when set, confines every run: the daemon always sets it
	// (internal/confine's Launcher). Nil runs the program with the
	// daemon's own reach, in its own process group: for tests only.
	Confine Confiner
}

// Confiner confines an agent's command before it starts.
type Confiner interface {
	// ConfineAgent rewrites cmd, prepared for a direct start, so that
	// it starts confined: it writes only project (without one, a
	// scratch directory of quest's; without a quest, nothing) and its
	// own temporary directory, and reaches the network only with
	// network. An empty cmd.Dir becomes the project or scratch
	// directory.
	// cleanup is called once the command has been waited for.
	// also are more directories it may write.
	ConfineAgent(cmd *exec.Cmd, project, quest string, network bool, also ...string) (cleanup func(), err error)
}

// Command is a provider that runs an external program per Run: the prompt on
// its stdin, its stdout as the answer. The program runs confined (see
// CommandConfig.Confine) and leads its own process group; where the kernel
// gives it a PID namespace, whatever it starts ends with it. On timeout or
// cancellation the whole group is killed with SIGKILL,
// and when Run returns no process of the group is left running (on unix; on
// other systems only the command itself is killed). A process that leaves
// the group (setsid, a daemon) is beyond reach: if it holds the output pipe,
// Run stops reading it one second after the group is gone.
//
// Stdout is kept up to OutputCap and the rest drained; the last 64 KiB of
// stderr are kept to quote the tail in a non-zero exit's error, and all of
// it goes to Request.Log as it comes (the run's log bounds it). A Request's
// Dir (the quest's project) replaces the configured working directory.
//
// A Command is safe for concurrent Run calls.
type Command struct {
	cfg CommandConfig // immutable after NewCommand
}

// NewCommand validates cfg and checks that the executable exists. It returns
// an error wrapping ErrNotFound, naming the executable, if it does not.
func NewCommand(cfg CommandConfig) (*Command, error) {
	if len(cfg.Argv) == 0 || cfg.Argv[0] == "" {
		return nil, fmt.Errorf("command provider %q: empty argv", cfg.Name)
	}
	if cfg.Name == "" {
		cfg.Name = cfg.Argv[0]
	}
	if cfg.Timeout <= 0 {
		return nil, fmt.Errorf("command provider %q: timeout must be positive, got %v", cfg.Name, cfg.Timeout)
	}
	if cfg.OutputCap <= 0 || cfg.OutputCap > MaxOutputCap {
		return nil, fmt.Errorf("command provider %q: output cap must be in 1..%d bytes, got %d", cfg.Name, MaxOutputCap, cfg.OutputCap)
	}
	if !validFormat(cfg.Format) {
		return nil, fmt.Errorf("command provider %q: output format %q is not one of %q, %q, %q", cfg.Name, cfg.Format, FormatText, FormatClaudeJSON, FormatCodexJSONL)
	}
	for _, name := range cfg.Env {
		if name == "" || strings.ContainsAny(name, "=\x00") {
			return nil, fmt.Errorf("command provider %q: invalid environment variable name %q in allow-list", cfg.Name, name)
		}
	}
	// Copy the slices so that the caller cannot change a running provider.
	cfg.Argv = append([]string(nil), cfg.Argv...)
	cfg.Env = append([]string(nil), cfg.Env...)
	cfg.Write = append([]string(nil), cfg.Write...)
	c := &Command{cfg: cfg}
	if _, err := c.resolve(); err != nil {
		return nil, err
	}
	return c, nil
}

// Name returns the provider's name.
func (c *Command) Name() string { return c.cfg.Name }

// Check reports whether the executable can be found now: nil, or an error
// wrapping ErrNotFound that names it. The engine calls it before creating
// a quest on this provider (engine.ProviderChecker).
func (c *Command) Check() error {
	_, err := c.resolve()
	return err
}

// resolve finds the executable for argv[0]. It runs at every Run as well as
// in NewCommand, because PATH and the file system change under a daemon.
func (c *Command) resolve() (string, error) {
	name := c.cfg.Argv[0]
	target := name
	if strings.ContainsRune(name, os.PathSeparator) || strings.ContainsRune(name, '/') {
		if !filepath.IsAbs(target) && c.cfg.Dir != "" {
			target = filepath.Join(c.cfg.Dir, target)
		}
	}
	path, err := exec.LookPath(target)
	if err != nil {
		// exec's messages already name the file ("executable file not found
		// in $PATH", "permission denied", ErrDot for relative PATH entries).
		return "", fmt.Errorf("command provider %q: %w: %v", c.cfg.Name, ErrNotFound, err)
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return path, nil
}

// env builds the child's environment from the allow-list. It is never nil:
// a nil Env would make os/exec inherit everything.
func (c *Command) env() []string {
	env := make([]string, 0, len(c.cfg.Env))
	for _, name := range c.cfg.Env {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// Run writes req.Prompt to the command's stdin and returns its stdout.
//
// Errors: ErrNotFound if the executable has disappeared; ErrTimeout if the
// timeout expired (the Reply holds the output so far); ctx.Err() wrapped if
// ctx was cancelled; "exited with status N: <stderr tail>" for a non-zero
// exit, with the Reply holding the output.
//
// A run in flight costs the calling goroutine (it reads stdout), one
// that reads stderr and one that waits for the command's exit (parked on
// the poller, not holding an OS thread, where pidfds exist), plus one
// that writes the prompt only when it does not fit in the stdin pipe: a
// busy tick has a thousand runs in flight.
func (c *Command) Run(ctx context.Context, req Request) (Reply, error) {
	reply := Reply{Cap: c.cfg.OutputCap}
	if err := ctx.Err(); err != nil {
		return reply, fmt.Errorf("command provider %q: %w", c.cfg.Name, err)
	}
	path, err := c.resolve()
	if err != nil {
		return reply, err
	}

	runCtx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()

	// Run owns the pipes rather than letting os/exec copy them: os/exec waits
	// for its copies to finish before Wait returns, but the group must be
	// killed first, when the leader exits, so that a grandchild holding the
	// pipes cannot keep Run waiting.
	p, err := openPipes()
	if err != nil {
		return reply, fmt.Errorf("command provider %q: %w", c.cfg.Name, err)
	}
	defer p.close()
	// A prompt that fits in the stdin pipe is written before the start:
	// no goroutine waits for the child to read it.
	prefilled := prefill(p.inW, req.Prompt)
	if prefilled {
		p.inW.Close()
	}

	cmd, cleanup, err := c.command(path, req, p)
	if err != nil {
		return reply, fmt.Errorf("command provider %q: %w", c.cfg.Name, err)
	}
	defer cleanup()
	if err := cmd.Start(); err != nil {
		return reply, c.startError(ctx, path, err)
	}
	// The child has its own copies; ours would keep the pipes open forever.
	p.inR.Close()
	p.outW.Close()
	p.errW.Close()
	req.started()

	// Timeout or cancellation kills the whole group (no os/exec watcher
	// goroutine: AfterFunc runs only if runCtx ends).
	var killed atomic.Bool
	stopKill := context.AfterFunc(runCtx, func() {
		killed.Store(true)
		_ = killProcessGroup(cmd.Process)
	})

	written := make(chan struct{})
	if prefilled {
		close(written)
	} else {
		go func() {
			defer close(written)
			// A child that exits without reading its stdin makes this
			// write fail with EPIPE; that is its right, not an error.
			_, _ = io.WriteString(p.inW, req.Prompt)
			p.inW.Close()
		}()
	}
	stderr := &tailBuffer{max: stderrKeep, log: req.Log}
	stderrDone := make(chan struct{})
	go func() {
		defer close(stderrDone)
		_, _ = stderr.ReadFrom(p.errR)
	}()
	var waitErr error
	exited := make(chan struct{})
	var grace *time.Timer
	go func() {
		defer close(exited)
		waitExited(cmd.Process.Pid)
		waitErr = cmd.Wait()
		stopKill()
		// The leader is gone; take the rest of its group with it so that
		// the pipes close. After the leader is reaped its pid stays
		// reserved as the group id while any member lives, so this cannot
		// hit a stranger.
		_ = killProcessGroup(cmd.Process)
		// Past ioGrace only a process that left the group can hold the
		// pipes: closing our ends stops the reads and the prompt's write
		// (we stop listening to it).
		grace = time.AfterFunc(ioGrace, p.stopReading)
	}()

	stdout := newCapBuffer(c.cfg.OutputCap)
	_, _ = stdout.ReadFrom(p.outR)
	<-exited
	<-stderrDone
	<-written
	grace.Stop()

	reply.Output = stdout.bytes()
	reply.Truncated = stdout.truncated
	reply.Tokens = EstimateTokens(req.Prompt, reply.Output)
	reply.StderrBytes = stderr.n

	err = c.outcome(ctx, path, killed.Load(), waitErr, stderr, &reply)
	if c.cfg.Format != FormatText && !killed.Load() {
		// A CLI that failed says why in its structured output, and
		// reports the tokens it spent either way: that message is
		// better than the exit status, and the tokens count in budgets.
		if derr := decodeOutput(c.cfg.Format, &reply); derr != nil && (err == nil || errors.Is(derr, ErrAgentReported)) {
			err = fmt.Errorf("command provider %q (%s): %w", c.cfg.Name, path, derr)
		}
		if !reply.TokensReported {
			reply.Tokens = EstimateTokens(req.Prompt, reply.Output)
		}
	}
	return reply, err
}

// command is the agent's process, not started, on the child's ends of p:
// confined when the provider is, in req's project directory (else the
// provider's Dir, else the quest's scratch directory); else in its own
// process group. cleanup removes what the run leaves behind once it has
// been waited for.
func (c *Command) command(path string, req Request, p *pipes) (cmd *exec.Cmd, cleanup func(), err error) {
	cmd = exec.Command(path)
	cmd.Args = append([]string(nil), c.cfg.Argv...)
	cmd.Env = c.env()
	cmd.Dir = c.cfg.Dir
	if req.Dir != "" {
		cmd.Dir = req.Dir
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.inR, p.outW, p.errW
	if c.cfg.Confine == nil {
		setProcessGroup(cmd)
		return cmd, func() {}, nil
	}
	cleanup, err = c.cfg.Confine.ConfineAgent(cmd, req.Dir, req.Quest, req.Network, c.cfg.Write...)
	if err != nil {
		return nil, nil, err
	}
	return cmd, cleanup, nil
}

// startError is the error of an agent that did not start: ErrNotFound
// when the program is missing or not executable, the context's error when
// the run was cancelled meanwhile.
func (c *Command) startError(ctx context.Context, path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("command provider %q: %w: %v", c.cfg.Name, ErrNotFound, err)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("command provider %q: %w", c.cfg.Name, ctx.Err())
	}
	return fmt.Errorf("command provider %q: start %s: %w", c.cfg.Name, path, err)
}

// outcome is the error of a run that ended: the caller's cancellation, the
// timeout's kill, an exit status (with the tail of stderr, and the status
// kept in reply.ExitCode), or nil.
func (c *Command) outcome(ctx context.Context, path string, killed bool, waitErr error, stderr *tailBuffer, reply *Reply) error {
	switch {
	case killed && ctx.Err() != nil:
		return fmt.Errorf("command provider %q (%s): %w", c.cfg.Name, path, ctx.Err())
	case killed:
		return fmt.Errorf("command provider %q (%s): killed after %v%s: %w",
			c.cfg.Name, path, c.cfg.Timeout, stderr.suffix(), ErrTimeout)
	case waitErr != nil:
		var exitErr *exec.ExitError
		if errors.As(waitErr, &exitErr) {
			status := fmt.Sprintf("exited with status %d", exitErr.ExitCode())
			reply.ExitCode = exitErr.ExitCode()
			if exitErr.ExitCode() < 0 {
				status = exitErr.ProcessState.String() // "signal: killed"
			}
			return fmt.Errorf("command provider %q (%s): %s%s", c.cfg.Name, path, status, stderr.suffix())
		}
		return fmt.Errorf("command provider %q (%s): %w", c.cfg.Name, path, waitErr)
	}
	return nil
}

// pipes are a run's stdin, stdout and stderr, both ends of each.
type pipes struct {
	inR, inW, outR, outW, errR, errW *os.File
}

func openPipes() (*pipes, error) {
	p := &pipes{}
	var err error
	if p.inR, p.inW, err = os.Pipe(); err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	if p.outR, p.outW, err = os.Pipe(); err != nil {
		p.close()
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	if p.errR, p.errW, err = os.Pipe(); err != nil {
		p.close()
		return nil, fmt.Errorf("stderr pipe: %w", err)
	}
	return p, nil
}

// close closes every end still open (closing one twice is harmless).
func (p *pipes) close() {
	for _, f := range []*os.File{p.inR, p.inW, p.outR, p.outW, p.errR, p.errW} {
		if f != nil {
			f.Close()
		}
	}
}

// stopReading closes our ends of the pipes to and from the child, which
// ends the reads and the prompt's write in progress.
func (p *pipes) stopReading() {
	p.inW.Close()
	p.outR.Close()
	p.errR.Close()
}

// tailBuffer keeps the last max bytes written to it, counts them, and
// passes every byte on to log, if set (a failing log does not stop it).
type tailBuffer struct {
	max int
	buf []byte
	n   int64
	log io.Writer
}

// ReadFrom writes what r gives, readChunk at a time, until EOF or an
// error, which it returns (EOF is not one).
func (b *tailBuffer) ReadFrom(r io.Reader) (int64, error) {
	var total int64
	chunk := chunks.Get().(*[readChunk]byte)
	defer chunks.Put(chunk)
	for {
		n, err := r.Read(chunk[:])
		_, _ = b.Write(chunk[:n])
		total += int64(n)
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.n += int64(len(p))
	if b.log != nil {
		_, _ = b.log.Write(p)
	}
	b.buf = append(b.buf, p...)
	if len(b.buf) > 2*b.max {
		// Compact only now and then, keeping appends amortised O(1).
		b.buf = append(b.buf[:0], b.buf[len(b.buf)-b.max:]...)
	}
	return len(p), nil
}

// tailLines and tailBytes bound the stderr quoted in an error message.
const (
	tailLines = 10
	tailBytes = 2000
)

// suffix returns ": " and the last lines of stderr, or "" if it was empty.
func (b *tailBuffer) suffix() string {
	s := b.buf
	if len(s) > b.max {
		s = s[len(s)-b.max:]
	}
	text := strings.TrimSpace(strings.ToValidUTF8(string(s), "\uFFFD"))
	if text == "" {
		return ""
	}
	lines := strings.Split(text, "\n")
	if len(lines) > tailLines {
		lines = lines[len(lines)-tailLines:]
	}
	text = strings.Join(lines, "\n")
	if len(text) > tailBytes {
		text = "…" + strings.ToValidUTF8(text[len(text)-tailBytes:], "")
	}
	return ": " + text
}
