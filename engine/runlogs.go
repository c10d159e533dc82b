package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/runlog"
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
	if e.opt.Logs == nil {
		return fmt.Errorf("run %s: %w", run, ErrNotFound)
	}
	var err error
	if follow {
		err = e.opt.Logs.Follow(ctx, w, run)
	} else {
		err = e.opt.Logs.Copy(w, run)
	}
	if errors.Is(err, runlog.ErrNotFound) {
		return fmt.Errorf("run %s has no log (none was kept, or it was dropped to keep the logs under logs.total): %w", run, ErrNotFound)
	}
	return err
}

// QuestRuns returns the runs of quest's nodes (only node's, when it is
// not ""), in the order they started. An empty quest lists every quest's.
func (e *Engine) QuestRuns(quest, node string) ([]Run, error) {
	var out []Run
	err := e.store.view(func(tx *store.Tx) error {
		var nodes []*Node
		switch {
		case node != "":
			n, err := records.ReadNode(tx, node)
			if err != nil {
				return err
			}
			if quest != "" && n.Quest != quest {
				return fmt.Errorf("node %s is not in quest %s: %w", node, quest, ErrNotFound)
			}
			nodes = []*Node{n}
		case quest != "":
			if tx.Quests().Get([]byte(quest)) == nil {
				return fmt.Errorf("quest %s: %w", quest, ErrNotFound)
			}
		}
		if node == "" {
			// Every run record, in sequence: the runs in flight from the
			// running index, then the runs bucket (it holds runs only).
			running, err := records.RunningRuns(tx, quest)
			if err != nil {
				return err
			}
			out = append(out, running...)
			return tx.Runs().ForEach(func(k, v []byte) error {
				if v == nil {
					return nil
				}
				var r Run
				if err := json.Unmarshal(v, &r); err != nil {
					return fmt.Errorf("decode run %s: %w", k, err)
				}
				if quest == "" || r.Quest == quest {
					out = append(out, r)
				}
				return nil
			})
		}
		for _, n := range nodes {
			for _, id := range n.Runs {
				r, _, err := records.GetRun(tx, id, n.Quest, n.ID)
				if err != nil {
					return err
				}
				out = append(out, r)
			}
		}
		return nil
	})
	slices.SortStableFunc(out, func(a, b Run) int { return cmp.Compare(records.RunNumber(a.ID), records.RunNumber(b.ID)) })
	nameRuns(out)
	return out, err
}

// nameRuns names runs, which are every run of their nodes in the order
// they started: a node's k-th run is quest:<quest>:<node>:<k>.
func nameRuns(runs []Run) {
	k := map[string]int{}
	for i := range runs {
		k[runs[i].Node]++
		runs[i].Name = domain.RunName(runs[i].Quest, runs[i].Node, k[runs[i].Node])
	}
}

// FindRun returns the run named by ref: a run id (r12), a run name
// (quest:q1:n3:2), or a node id (its latest run).
func (e *Engine) FindRun(ref string) (Run, error) {
	var r Run
	err := e.store.view(func(tx *store.Tx) error {
		id := ref
		switch {
		case strings.HasPrefix(ref, "quest:"):
			parts := strings.Split(ref, ":")
			k, err := strconv.Atoi(parts[len(parts)-1])
			if len(parts) != 4 || err != nil || k < 1 {
				return fmt.Errorf("run %q: a run name is quest:QUEST:NODE:K: %w", ref, ErrInvalid)
			}
			n, err := records.ReadNode(tx, parts[2])
			if err != nil {
				return err
			}
			if n.Quest != parts[1] || k > len(n.Runs) {
				return fmt.Errorf("run %s: %w", ref, ErrNotFound)
			}
			id = n.Runs[k-1]
		case strings.HasPrefix(ref, "n"):
			n, err := records.ReadNode(tx, ref)
			if err != nil {
				return err
			}
			if len(n.Runs) == 0 {
				return fmt.Errorf("node %s has not run yet: %w", ref, ErrNotFound)
			}
			id = n.Runs[len(n.Runs)-1]
		}
		var ok bool
		var err error
		r, ok, err = records.GetRun(tx, id, "", "")
		if err == nil && !ok {
			err = fmt.Errorf("run %s: %w", ref, ErrNotFound)
		}
		if err != nil {
			return err
		}
		if n, err := records.ReadNode(tx, r.Node); err == nil {
			if k := slices.Index(n.Runs, r.ID); k >= 0 {
				r.Name = domain.RunName(r.Quest, r.Node, k+1)
			}
		}
		return nil
	})
	return r, err
}
