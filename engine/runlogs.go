package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/runlog"
	"github.com/questbox/questbox/engine/runs"
	"github.com/questbox/questbox/engine/store"
)

// Logs is the engine's run log directory (Options.Logs), nil if it keeps
// none.
func (e *Engine) Logs() *runlog.Dir { return e.opt.Logs }

// openLog starts the log of d's run, with a header line; nil when the
// engine keeps no logs or the log cannot be created (the run goes on
// without one: a log must never cost an answer). Everything written to
// it is masked (Options.Redaction) before it reaches the disk.
func (e *Engine) openLog(d *dispatch) io.WriteCloser {
	if e.opt.Logs == nil {
		return nil
	}
	f, err := e.opt.Logs.Create(d.run.ID)
	if err != nil {
		e.log.Warn("run log not kept", "run", d.run.ID, "err", err)
		return nil
	}
	lg := d.opt.Redaction.Log(f)
	fmt.Fprintf(lg, "── %s (run %s) · %s · provider %s · started %s ──\n", d.run.Name, d.run.ID, d.node.Role, d.run.Provider,
		d.run.Started.UTC().Format("2006-01-02T15:04:05Z"))
	return lg
}

// logAnswer appends the answer to the run's log, under a line giving its
// size.
func logAnswer(lg io.Writer, reply agent.Reply) {
	if lg == nil {
		return
	}
	cut := ""
	if reply.Truncated {
		cut = ", cut at the provider's cap"
	}
	fmt.Fprintf(lg, "── answer (%d bytes%s) ──\n", len(reply.Output), cut)
	lg.Write(reply.Output)
	if len(reply.Output) > 0 && reply.Output[len(reply.Output)-1] != '\n' {
		lg.Write([]byte{'\n'})
	}
}

// closeLog ends d's log with how the run ended and closes it; the group
// commit that records the result makes it durable first (Store.beforeEachCommit).
func (e *Engine) closeLog(d *dispatch, lg io.WriteCloser, res *result) {
	if lg == nil {
		return
	}
	end := res.exit
	if res.exit == ExitCrashed && res.exitCode != 0 {
		end = fmt.Sprintf("%s (exit %d)", res.exit, res.exitCode)
	}
	why := res.why
	if why == "" {
		why = strings.TrimSpace(res.feedback)
	}
	if why != "" {
		why = ": " + why
	}
	fmt.Fprintf(lg, "── end: %s · %s%s ──\n", end, res.outcome(), why)
	if err := lg.Close(); err != nil {
		e.log.Warn("run log incomplete", "run", d.run.ID, "err", err)
	}
}

// exitOf classifies how a provider's run ended (Run.Exit).
func (e *Engine) exitOf(ctx context.Context, reply agent.Reply, err error) (string, int) {
	switch {
	case err == nil:
		return ExitAnswered, 0
	case ctx.Err() != nil:
		if e.runCtx.Err() != nil {
			return ExitInterrupted, 0 // the daemon is stopping
		}
		return ExitKilled, 0 // aborted
	case errors.Is(err, agent.ErrTimeout):
		return ExitTimeout, 0
	case errors.Is(err, agent.ErrUnavailable):
		return ExitDeferred, 0
	case reply.ExitCode < 0:
		return ExitKilled, reply.ExitCode
	}
	return ExitCrashed, reply.ExitCode
}

// RunLog writes the log of run (an id r<N> or a name quest:Q:N:K) to w;
// with follow, while the run is in flight, until it ends or ctx does.
func (e *Engine) RunLog(ctx context.Context, w io.Writer, run string, follow bool) error {
	return runs.Log(ctx, e.opt.Logs, w, run, follow)
}

// QuestRuns returns the runs of quest's nodes (only node's, when it is
// not ""), in the order they started. An empty quest lists every quest's.
func (e *Engine) QuestRuns(quest, node string) ([]Run, error) {
	var out []Run
	err := e.store.view(func(tx *store.Tx) (err error) {
		out, err = runs.OfQuest(tx, quest, node)
		return err
	})
	return out, err
}

// FindRun returns the run named by ref: a run id (r12), a run name
// (quest:q1:n3:2), or a node id (its latest run).
func (e *Engine) FindRun(ref string) (Run, error) {
	var r Run
	err := e.store.view(func(tx *store.Tx) (err error) {
		r, err = runs.Find(tx, ref)
		return err
	})
	return r, err
}
