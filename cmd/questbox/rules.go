package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
)

// rulesCmd is `rules [--quest Q | --gate G]`: the gate's catalog, the
// audit list of what it blocks. Without a flag it lists the built-in rule
// kinds and the rules of the profile new quests use (defaults.gate).
type rulesCmd struct{ quest, gate string }

func (c *rulesCmd) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.quest, "quest", "", "the rules of this quest's gate profile")
	fs.StringVar(&c.gate, "gate", "", "the rules of this gate profile (default: the config's defaults.gate)")
}

func (c *rulesCmd) run(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("rules", args); err != nil {
		return err
	}
	v, err := e.door.api(ctx).Rules(ctx, c.quest, c.gate)
	if err != nil {
		return err
	}
	if e.json {
		return printJSON(e.stdout, v)
	}
	w := e.stdout
	if v.Kinds != nil {
		fmt.Fprintln(w, "Built-in rule kinds (compose them per profile under [gates.NAME] in the config):")
		tw := table(w)
		fmt.Fprintln(tw, "KIND\tSTAGE\tDESCRIPTION")
		for _, k := range v.Kinds {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", k.Kind, k.Stage, k.Description)
			if k.Params != "none" && k.Params != "" {
				fmt.Fprintf(tw, "\t\tparams: %s\n", k.Params)
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	switch {
	case v.Quest != "":
		fmt.Fprintf(w, "Gate profile %q of quest %s:\n", v.Gate, v.Quest)
	case c.gate == "":
		fmt.Fprintf(w, "Gate profile %q (new quests use it):\n", v.Gate)
	default:
		fmt.Fprintf(w, "Gate profile %q:\n", v.Gate)
	}
	tw := table(w)
	fmt.Fprintln(tw, "ID\tLEVEL\tSTAGE\tKIND\tATTACKS\tSUPERSEDES\tWEIGHT\tDESCRIPTION")
	for _, r := range v.Rules {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Level, r.Stage, r.Kind, edges(r.Attacks), edges(r.Supersedes),
			strconv.FormatFloat(r.Weight, 'g', -1, 64), r.Description)
	}
	return tw.Flush()
}

// edges renders a rule's edge list, "-" for none.
func edges(ids []string) string {
	if len(ids) == 0 {
		return "-"
	}
	return strings.Join(ids, ",")
}
