package main

import (
	"context"
	"flag"
	"fmt"
)

// verifyCmd is `verify`: the store's pages and the whole verdict ledger.
// It exits 2 naming what is broken.
type verifyCmd struct{}

func (c *verifyCmd) flags(*flag.FlagSet) {}

func (c *verifyCmd) run(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("verify", args); err != nil {
		return err
	}
	v, err := e.door.api(ctx).Verify(ctx)
	if err != nil {
		return err
	}
	if e.json {
		return printJSON(e.stdout, v)
	}
	fmt.Fprintf(e.stdout, "ok: store %s is consistent; %d ledger records chain correctly and match %d locked nodes\n",
		v.Store, v.Records, v.LockedNodes)
	for _, n := range v.Notes {
		fmt.Fprintf(e.stdout, "note: %s\n", n)
	}
	return nil
}
