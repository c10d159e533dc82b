package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/questbox/questbox/ui/api"
)

// runsCmd is `runs [QUEST] [--node N]`: the agent runs and how each ended.
type runsCmd struct {
	node string
}

func (c *runsCmd) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.node, "node", "", "only this node's runs")
}

func (c *runsCmd) run(ctx context.Context, e *env, args []string) error {
	if len(args) > 1 {
		return usagef("runs takes at most one QUEST, got %q", args)
	}
	quest := ""
	if len(args) == 1 {
		quest = args[0]
	}
	rs, err := e.door.api(ctx).Runs(ctx, quest, c.node)
	if err != nil {
		return err
	}
	if e.json {
		return printJSON(e.stdout, rs)
	}
	if len(rs) == 0 {
		fmt.Fprintln(e.stdout, "no runs")
		return nil
	}
	w := table(e.stdout)
	fmt.Fprintln(w, "RUN\tID\tROLE\tPROVIDER\tSTARTED\tTOOK\tEXIT\tOUTCOME\tTOKENS\tCOST\tIN\tOUT\tLOG")
	for _, r := range rs {
		took := "-"
		if !r.Running {
			took = r.Ended.Sub(r.Started).Round(time.Millisecond).String()
		}
		log := "-"
		if r.Log {
			log = "yes"
		}
		if r.Redacted {
			log += " (redacted)"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", r.Name, r.ID, dash(r.Role), r.Provider,
			r.Started.UTC().Format(time.RFC3339), took, runExit(r), dash(r.Outcome), r.Tokens, cost(r.CostUSD), size(r.BytesIn), size(r.BytesOut), log)
	}
	return w.Flush()
}

// runExit says how a run ended, as `runs` prints it.
func runExit(r api.Run) string {
	switch {
	case r.Running:
		return "running"
	case r.Exit == "":
		return "-"
	case r.ExitCode != 0:
		return r.Exit + " (exit " + strconv.Itoa(r.ExitCode) + ")"
	}
	return r.Exit
}

// cost is a run's reported cost as `runs` prints it: dollars to the
// cent from a dollar up, else four places; "-" when none was reported.
func cost(usd float64) string {
	switch {
	case usd == 0:
		return "-"
	case usd >= 1:
		return fmt.Sprintf("$%.2f", usd)
	}
	return fmt.Sprintf("$%.4f", usd)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// size prints a byte count briefly: 812, 4.1K, 2.0M.
func size(n int64) string {
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10)
	case n < 1000_000:
		return strconv.FormatFloat(float64(n)/1000, 'f', 1, 64) + "K"
	}
	return strconv.FormatFloat(float64(n)/1000_000, 'f', 1, 64) + "M"
}

// logsCmd is `logs RUN|NODE [--follow]`.
type logsCmd struct {
	follow bool
}

func (c *logsCmd) flags(fs *flag.FlagSet) {
	fs.BoolVar(&c.follow, "follow", false, "while the run is in flight, keep printing what it writes until it ends")
}

func (c *logsCmd) run(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("logs", args, "RUN|NODE"); err != nil {
		return err
	}
	if !e.json {
		_, err := e.door.api(ctx).RunLog(ctx, args[0], c.follow, e.stdout)
		return err
	}
	if c.follow {
		return usagef("logs --follow streams text; it does not take --json")
	}
	var log strings.Builder
	run, err := e.door.api(ctx).RunLog(ctx, args[0], false, &log)
	if err != nil {
		return err
	}
	return printJSON(e.stdout, struct {
		Run string `json:"run"`
		Log string `json:"log"`
	}{run, log.String()})
}
