package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/questbox/questbox/ui/api"
)

// verifyExportCmd is `verify-export FILE [--key FINGERPRINT]`: the offline
// check of an export (api.VerifyExport) that anyone with the questbox
// binary can run, with no store and no daemon. It exits 2 naming the line
// and what failed, as verify does.
type verifyExportCmd struct{ key string }

func (c *verifyExportCmd) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.key, "key", "", "require this device key (its fingerprint, SHA256:…, as `questbox verify` prints it on the box)")
}

func (c *verifyExportCmd) run(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("verify-export", args, "FILE"); err != nil {
		return err
	}
	path := args[0]
	if !filepath.IsAbs(path) {
		path = filepath.Join(e.cwd, path)
	}
	if c.key != "" && !strings.HasPrefix(c.key, "SHA256:") {
		return usagef("verify-export: --key %q is not a key fingerprint (SHA256:…, as `questbox verify` prints it)", c.key)
	}
	f, err := os.Open(path)
	if err != nil {
		return usagef("verify-export: %v", err)
	}
	defer f.Close()
	v, err := api.VerifyExport(f, c.key)
	if errors.Is(err, api.ErrExportUnverified) {
		return &exitError{Code: exitStore, Err: fmt.Errorf("verify-export %s: %w", path, err)}
	}
	if err != nil {
		return err
	}
	if e.json {
		return printJSON(e.stdout, v)
	}
	fmt.Fprintf(e.stdout, "ok: %s: %s, %s of quest %s, signed by device key %s with the ledger heads they name (records %s)\n",
		path, plural(v.Batches, "batch", "batches"), plural(v.Nodes, "node", "nodes"), strings.Join(v.Quests, ", "), v.Key, joinSeqs(v.Heads))
	if c.key == "" {
		fmt.Fprintln(e.stdout, "compare that key with the box's (`questbox verify` on the box prints it), or pass it with --key: anyone can sign with a key of their own")
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func joinSeqs(s []uint64) string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = fmt.Sprint(v)
	}
	return strings.Join(out, ", ")
}
