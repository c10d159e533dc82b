package main

import (
	"context"
	"flag"
	"fmt"
)

// verifyCmd is `verify`: the store's pages and the whole verdict ledger.
// It exits 2 naming the first broken record.
type verifyCmd struct{}

func (c *verifyCmd) flags(*flag.FlagSet) {}

func (c *verifyCmd) run(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("verify", args); err != nil {
		return err
	}
	rep, err := e.eng.Verify()
	if err != nil {
		return fmt.Errorf("verify %s: %w", e.eng.Store().Path(), err)
	}
	if e.json {
		return printJSON(e.stdout, map[string]any{"ok": true, "store": e.eng.Store().Path(), "records": rep.Records, "locked_nodes": rep.Locked, "notes": rep.Notes})
	}
	fmt.Fprintf(e.stdout, "ok: store %s is consistent; %d ledger records chain correctly and match %d locked nodes\n",
		e.eng.Store().Path(), rep.Records, rep.Locked)
	for _, n := range rep.Notes {
		fmt.Fprintf(e.stdout, "note: %s\n", n)
	}
	return nil
}
