package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/questbox/questbox/internal/daemon"
)

// backupCmd is `backup [--out FILE]`: the daemon (or, without one, this
// process over the store opened read-only) streams one consistent copy of
// the store through the API; daemon.WriteBackup writes it beside FILE,
// fsyncs it, verifies it as `verify` does and only then renames it into
// place. The default FILE is questbox-YYYYmmdd-HHMMSS.db (UTC) in the
// current directory; an --out that is a directory gets that name in it.
type backupCmd struct{ out string }

func (c *backupCmd) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.out, "out", "", "write the backup to FILE, or into a directory (default questbox-YYYYmmdd-HHMMSS.db here)")
}

// backupView is what `backup --json` prints.
type backupView struct {
	File        string `json:"file"`
	Bytes       int64  `json:"bytes"`
	Schema      uint64 `json:"schema"`
	Records     int    `json:"records"`
	LockedNodes int    `json:"locked_nodes"`
}

func (c *backupCmd) run(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("backup", args); err != nil {
		return err
	}
	path := c.out
	if path != "" && !filepath.IsAbs(path) {
		path = filepath.Join(e.cwd, path)
	}
	if fi, err := os.Stat(path); path == "" || (err == nil && fi.IsDir()) {
		if path == "" {
			path = e.cwd
		}
		path = filepath.Join(path, daemon.BackupName(time.Now()))
	}
	var n int64
	rep, err := daemon.WriteBackup(path, func(w io.Writer) error {
		var err error
		n, err = e.door.api(ctx).Backup(ctx, w)
		return err
	})
	if err != nil {
		return err
	}
	if e.json {
		return printJSON(e.stdout, backupView{File: path, Bytes: n, Schema: rep.Schema, Records: rep.Records, LockedNodes: rep.Locked})
	}
	fmt.Fprintf(e.stdout, "backup written to %s (%d bytes, schema %d); verified: %d ledger records chain correctly and match %d locked nodes\n",
		path, n, rep.Schema, rep.Records, rep.Locked)
	// The backup holds the head's signature, not the device key.
	fmt.Fprintf(e.stdout, "%s\n", rep.Signature.Detail)
	return nil
}

// restoreCmd is `restore FILE`: the backup replaces the store, which is
// kept beside it as questbox.db.before-restore-<UTC time>. The file is
// verified first (engine.Restore) and refused, changing nothing, if it is
// corrupt, its ledger is broken or a newer questbox wrote it. With a
// daemon running, the daemon stops its work as at shutdown, swaps the
// file, and starts again on the restored store; without one, this process
// swaps it under the store's lock.
type restoreCmd struct{}

func (c *restoreCmd) flags(*flag.FlagSet) {}

func (c *restoreCmd) run(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("restore", args, "FILE"); err != nil {
		return err
	}
	path := args[0]
	if !filepath.IsAbs(path) {
		path = filepath.Join(e.cwd, path)
	}
	rep, err := e.door.api(ctx).Restore(ctx, path)
	if err != nil {
		return err
	}
	if e.json {
		return printJSON(e.stdout, rep)
	}
	fmt.Fprintf(e.stdout, "restored %s into %s (schema %d", path, rep.Store, rep.Schema)
	if rep.Migrated {
		fmt.Fprint(e.stdout, ", migrated")
	}
	fmt.Fprintln(e.stdout, ")")
	if rep.Kept != "" {
		fmt.Fprintf(e.stdout, "the store it replaced is kept as %s\n", rep.Kept)
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(e.stdout, "%s\n", n)
	}
	return nil
}
