package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/questbox/questbox/internal/daemon"
)

// salvageCmd is `salvage --data DIR`: daemon.Salvage copies every readable
// record of a corrupt store into a fresh questbox.db, keeps the corrupt
// file as questbox.db.corrupt-<UTC time>, and says what was lost.
type salvageCmd struct{}

func (c *salvageCmd) flags(*flag.FlagSet) {}

func (c *salvageCmd) run(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("salvage", args); err != nil {
		return err
	}
	path := daemon.StorePath(e.data)
	if _, err := os.Stat(path); err != nil {
		return usagef("salvage: %v", err)
	}
	rep, err := daemon.Salvage(e.data, time.Now())
	if err != nil {
		return err // in use, newer schema, permissions: salvage would not help
	}
	if e.json {
		return printJSON(e.stdout, rep)
	}
	w := e.stdout
	if rep.Healthy {
		fmt.Fprintf(w, "store %s is not corrupt: nothing to salvage (`questbox verify` also checks the verdict ledger)\n", path)
		for _, n := range rep.Notes {
			fmt.Fprintf(w, "note: %s\n", n)
		}
		if rep.Verify != "ok" {
			fmt.Fprintf(w, "verify: %s\n(salvage cannot repair a ledger that proves a record was rewritten)\n", rep.Verify)
		}
		return nil
	}
	fmt.Fprintf(e.stderr, "salvaged %s: %s\n", path, strings.Join(rep.Damage, "; "))
	fmt.Fprintf(w, "salvaged %d buckets, %d keys into %s\n", rep.Buckets, rep.Keys, path)
	fmt.Fprintf(w, "the corrupt store is kept as %s\n", rep.Moved)
	if len(rep.Lost) == 0 {
		fmt.Fprintln(w, "lost: nothing that could be found")
	} else {
		fmt.Fprintln(w, "lost:")
		for _, l := range rep.Lost {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	if len(rep.Rebuilt) > 0 {
		fmt.Fprintln(w, "rebuilt:")
		for _, r := range rep.Rebuilt {
			fmt.Fprintf(w, "  %s\n", r)
		}
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if rep.Verify == "ok" {
		fmt.Fprintln(w, "verify: ok")
	} else {
		fmt.Fprintf(w, "verify: %s\n(the salvaged store opens, but records were lost; what the ledger covered can no longer be proven)\n", rep.Verify)
	}
	return nil
}
