package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
)

// tickCmd is `tick`: exactly one round, waiting for the runs it started
// (for cron and tests). Through the daemon it is one extra round of the
// daemon's engine, and it also waits for the daemon's other runs and for
// the follow-up work their results enable (a Team's next stages, a
// council's merge: docs/design.md, "When work is dispatched"). Without
// a daemon, Ctrl-C cancels the runs: their nodes go back to pending with an
// interrupted attempt.
type tickCmd struct{}

func (c *tickCmd) flags(*flag.FlagSet) {}

func (c *tickCmd) run(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("tick", args); err != nil {
		return err
	}
	t, err := e.door.api(ctx).Tick(ctx)
	if err != nil {
		return err
	}
	if e.json {
		return printJSON(e.stdout, t)
	}
	for _, ev := range t.Events {
		fmt.Fprintln(e.stdout, formatEvent(ev))
	}
	fmt.Fprintf(e.stdout, "tick: dispatched %d%s", len(t.Dispatched), list(t.Dispatched))
	if len(t.Resumed) > 0 {
		fmt.Fprintf(e.stdout, ", resumed %d%s", len(t.Resumed), list(t.Resumed))
	}
	if len(t.Finished) > 0 {
		fmt.Fprintf(e.stdout, ", finished %d%s", len(t.Finished), list(t.Finished))
	}
	if len(t.Terminated) > 0 {
		fmt.Fprintf(e.stdout, ", terminated %d%s", len(t.Terminated), list(t.Terminated))
	}
	fmt.Fprintln(e.stdout)
	return nil
}

func list(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return " (" + strings.Join(ids, " ") + ")"
}
