package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/questbox/questbox/gates"
)

// rulesCmd is `rules [--quest Q | --gate G]`: the gate's catalog, the
// audit list of what it blocks. Without a flag it lists the built-in rule
// kinds and the rules of the profile new quests use (defaults.gate).
type rulesCmd struct{ quest, gate string }

func (c *rulesCmd) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.quest, "quest", "", "the rules of this quest's gate profile")
	fs.StringVar(&c.gate, "gate", "", "the rules of this gate profile (default: the config's defaults.gate)")
}

// noEngine: only --quest needs the store.
func (c *rulesCmd) noEngine() bool { return c.quest == "" }

// rulesView is what `rules --json` prints. Kinds is present only without
// --quest and --gate; Quest only with --quest.
type rulesView struct {
	Kinds []gates.KindInfo `json:"kinds,omitempty"`
	Quest string           `json:"quest,omitempty"`
	Gate  string           `json:"gate"`
	Rules []gates.RuleInfo `json:"rules"`
}

func (c *rulesCmd) run(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("rules", args); err != nil {
		return err
	}
	if c.quest != "" && c.gate != "" {
		return usagef("rules takes --quest or --gate, not both")
	}
	v := rulesView{Gate: e.cfg.Defaults.Gate}
	switch {
	case c.quest != "":
		q, err := e.eng.Quest(c.quest)
		if err != nil {
			return err
		}
		v.Quest, v.Gate = q.ID, q.Gate
		if v.Gate == "" {
			v.Gate = "default"
		}
	case c.gate != "":
		v.Gate = c.gate
	default:
		v.Kinds = gates.Kinds()
	}
	cat, err := e.cfg.Catalog(v.Gate)
	if err != nil {
		if v.Quest != "" {
			return fmt.Errorf("quest %s: %w", v.Quest, err)
		}
		return usagef("%v", err)
	}
	v.Rules = cat.Describe()
	if e.json {
		return printJSON(e.stdout, v)
	}
	w := e.stdout
	if v.Kinds != nil {
		fmt.Fprintln(w, "Built-in rule kinds (compose them per profile under [gates.NAME] in the config):")
		tw := table(w)
		fmt.Fprintln(tw, "KIND\tSTAGE\tDESCRIPTION")
		for _, k := range v.Kinds {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", k.Name, k.Stage, k.Description)
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
