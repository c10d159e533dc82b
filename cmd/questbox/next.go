package main

import (
	"context"
	"flag"
	"fmt"
)

// nextCmd is `next QUEST`: the prompt of the node an external agent should
// work on. It changes nothing.
type nextCmd struct{}

func (c *nextCmd) flags(*flag.FlagSet) {}

func (c *nextCmd) run(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("next", args, "QUEST"); err != nil {
		return err
	}
	w, err := e.door.api(ctx).Next(ctx, args[0])
	if err != nil {
		return err
	}
	if w.Node == nil {
		fmt.Fprintf(e.stderr, "nothing is pending in quest %s\n", args[0])
		if e.json {
			return printJSON(e.stdout, w)
		}
		return nil
	}
	if e.json {
		return printJSON(e.stdout, w)
	}
	fmt.Fprint(e.stdout, w.Prompt)
	fmt.Fprintf(e.stderr, "node %s (%s, try %d); answer with `questbox submit %s --node %s < answer`\n", *w.Node, w.Role, w.Attempt, w.Quest, *w.Node)
	return nil
}
