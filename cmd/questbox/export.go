package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
)

// exportCmd is `export QUEST [--out FILE]`: JSONL of the quest's terminal
// nodes, each exported once. With --out it is exactly once across failures
// and crashes (api.Client.ExportFile: the batch is journaled, written and
// synced here, then acknowledged); to stdout it is at least once (a crash
// between printing and acknowledging prints those lines again).
type exportCmd struct{ out string }

func (c *exportCmd) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.out, "out", "", "append to FILE, exactly once across runs and crashes (default stdout)")
}

// exportView is the JSON summary printed with --json --out.
type exportView struct {
	Quest   string `json:"quest"`
	Written int    `json:"written"`
	File    string `json:"file,omitempty"`
}

func (c *exportCmd) run(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("export", args, "QUEST"); err != nil {
		return err
	}
	quest := args[0]
	if c.out == "" {
		n, err := e.door.api(ctx).ExportTo(ctx, quest, e.stdout)
		if err != nil {
			return err
		}
		exported(e.stderr, quest, n, "stdout")
		return nil
	}
	path := c.out
	if !filepath.IsAbs(path) {
		path = filepath.Join(e.cwd, path)
	}
	n, err := e.door.api(ctx).ExportFile(ctx, quest, path)
	if err != nil {
		return err
	}
	if e.json {
		if err := printJSON(e.stdout, exportView{Quest: quest, Written: n, File: path}); err != nil {
			return err
		}
	}
	exported(e.stderr, quest, n, path)
	return nil
}

func exported(w io.Writer, quest string, n int, where string) {
	if n == 0 {
		fmt.Fprintf(w, "exported 0 nodes of quest %s: nothing became terminal since the last export\n", quest)
		return
	}
	noun := "nodes"
	if n == 1 {
		noun = "node"
	}
	fmt.Fprintf(w, "exported %d %s of quest %s to %s\n", n, noun, quest, where)
}
