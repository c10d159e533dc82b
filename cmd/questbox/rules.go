package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/questbox/questbox/gates"
)

// rulesCmd is `rules [--quest Q]`: the gate's catalog, the audit list of
// what it blocks.
type rulesCmd struct{ quest string }

func (c *rulesCmd) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.quest, "quest", "", "the catalog of this quest's gate profile (default: the built-in catalog)")
}

// noEngine: the built-in catalog needs no store.
func (c *rulesCmd) noEngine() bool { return c.quest == "" }

// ruleView is one rule as `rules --json` prints it.
type ruleView struct {
	ID          string      `json:"id"`
	Level       gates.Level `json:"level"`
	Stage       gates.Stage `json:"stage"`
	Description string      `json:"description"`
}

func (c *rulesCmd) run(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("rules", args); err != nil {
		return err
	}
	cat, err := catalog(nil)
	if c.quest != "" {
		q, qerr := e.eng.Quest(c.quest)
		if qerr != nil {
			return qerr
		}
		cat, err = catalog(q)
	}
	if err != nil {
		return err
	}
	views := []ruleView{}
	for _, r := range cat.Rules() {
		views = append(views, ruleView{ID: r.ID(), Level: r.Level(), Stage: r.Stage(), Description: r.Description()})
	}
	if e.json {
		return printJSON(e.stdout, views)
	}
	tw := table(e.stdout)
	fmt.Fprintln(tw, "ID\tLEVEL\tSTAGE\tDESCRIPTION")
	for _, v := range views {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", v.ID, v.Level, v.Stage, v.Description)
	}
	return tw.Flush()
}
