package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/questbox/questbox/ui/api"
)

// statusCmd is `status QUEST`: counts per status and what is left of the
// budgets.
type statusCmd struct{}

func (c *statusCmd) flags(*flag.FlagSet) {}

func (c *statusCmd) run(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("status", args, "QUEST"); err != nil {
		return err
	}
	v, err := e.door.api(ctx).Status(ctx, args[0])
	if err != nil {
		return err
	}
	if e.json {
		return printJSON(e.stdout, v)
	}
	w := e.stdout
	fmt.Fprintf(w, "quest %s %q: %s", v.Quest, v.Name, v.Status)
	if v.Reason != "" {
		fmt.Fprintf(w, " (%s)", v.Reason)
	}
	fmt.Fprintln(w)
	if f := v.Findings; f != nil {
		// A finished quest reads as what it found: its counts by status
		// would say "growing 2" of findings kept and count every Team
		// stage, owner turn and council vote as explored.
		tw := &textWriter{w: w}
		tw.line("", "finished: "+f.String())
		found := f.Conclusions + f.Growing + f.DeadEnds
		nodes := fmt.Sprintf("nodes: %d (%d findings, %d closed without one", v.Total, found, f.Closed)
		if rest := v.Total - found - f.Closed; rest > 0 {
			nodes += fmt.Sprintf(", %d Team stages, owner turns and council votes", rest)
		}
		tw.line("", nodes+")")
		tw.line("", fmt.Sprintf("the findings: `questbox quest result %s`", v.Quest))
		if tw.err != nil {
			return tw.err
		}
	} else {
		var parts []string
		for _, s := range api.NodeStatuses {
			if n := v.Counts[string(s)]; n > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", s, n))
			}
		}
		if len(parts) == 0 {
			parts = []string{"none"}
		}
		fmt.Fprintf(w, "nodes: %d (%s)\n", v.Total, strings.Join(parts, ", "))
	}
	if v.Running != "" {
		fmt.Fprintf(w, "running: %s\n", v.Running)
	}
	l := v.Limits
	fmt.Fprintf(w, "remaining: %d of %d agent runs, %d of %d tokens, %s of %s wall clock\n",
		v.Remaining.AgentRuns, l.MaxAgentRuns, v.Remaining.Tokens, l.TokenBudget, v.Remaining.WallClock, l.WallClock)
	// Which configuration the daemon runs on (a reload replaces it);
	// without a daemon there is none to show.
	if h, err := e.door.api(ctx).Health(ctx); err == nil && h.Config != nil {
		file := h.Config.File
		if file == "" {
			file = "built-in defaults"
		}
		fmt.Fprintf(w, "config: generation %d, loaded %s from %s\n", h.Config.Generation, h.Config.Loaded.Local().Format(time.DateTime), file)
	}
	return nil
}
