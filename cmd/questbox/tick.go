package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/questbox/questbox/engine"
)

// tickCmd is `tick`: exactly one round, waiting for the runs it started
// (for cron and tests). Through the daemon it is one extra round of the
// daemon's engine, and it also waits for the daemon's other runs.
type tickCmd struct{}

func (c *tickCmd) flags(*flag.FlagSet) {}

// tickView is the JSON of `tick`.
type tickView struct {
	Report engine.TickReport `json:"report"`
	Events []engine.Event    `json:"events"`
}

func (c *tickCmd) run(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("tick", args); err != nil {
		return err
	}
	since := e.eng.LastSeq()
	rep, err := e.eng.Tick(ctx)
	if err != nil {
		return err
	}
	// Wait for the runs. Interrupted (Ctrl-C) outside the daemon, cancel
	// them: their nodes go back to pending with an interrupted attempt.
	done := make(chan struct{})
	go func() { e.eng.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		if !e.inDaemon {
			e.eng.Shutdown(0)
		}
		<-done
	}
	evs, err := e.eng.Events(since, 100000)
	if err != nil {
		return err
	}
	if e.json {
		if evs == nil {
			evs = []engine.Event{}
		}
		return printJSON(e.stdout, tickView{Report: rep, Events: evs})
	}
	for _, ev := range evs {
		fmt.Fprintln(e.stdout, formatEvent(ev))
	}
	fmt.Fprintf(e.stdout, "tick: dispatched %d%s", len(rep.Dispatched), list(rep.Dispatched))
	if len(rep.Resumed) > 0 {
		fmt.Fprintf(e.stdout, ", resumed %d%s", len(rep.Resumed), list(rep.Resumed))
	}
	if len(rep.Finished) > 0 {
		fmt.Fprintf(e.stdout, ", finished %d%s", len(rep.Finished), list(rep.Finished))
	}
	if len(rep.Terminated) > 0 {
		fmt.Fprintf(e.stdout, ", terminated %d%s", len(rep.Terminated), list(rep.Terminated))
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
