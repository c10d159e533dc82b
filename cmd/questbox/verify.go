package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/questbox/questbox/ui/api"
)

// verifyCmd is `verify`: the store's pages, the whole verdict ledger and
// the signature of its head by this box's device key, whose fingerprint
// it prints. It exits 2 naming what is broken.
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
	if v.Signature.State == api.SignatureUnsigned {
		fmt.Fprintf(e.stdout, "warning: %s\n", v.Signature.Detail)
	} else {
		fmt.Fprintf(e.stdout, "ok: %s\n", v.Signature.Detail)
	}
	for _, n := range v.Notes {
		fmt.Fprintf(e.stdout, "note: %s\n", n)
	}
	return nil
}
