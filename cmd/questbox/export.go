package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// exportCmd is `export QUEST [--out FILE]`: JSONL of the quest's terminal
// nodes, each exported once. With --out the engine journals the export in
// the store (engine.ExportFile), so a crash in the middle neither loses nor
// repeats a line; to stdout, a crash between writing and committing the
// cursor repeats that batch.
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

// prepare: through the daemon, the file is the client's to write. The
// daemon streams the lines back and its cursor advances as it sends them;
// the client appends and syncs them (see the comment atop forward.go).
func (c *exportCmd) prepare(e *env, fs *flag.FlagSet, args []string, req *request) (func(*response) error, error) {
	if c.out == "" {
		return nil, nil
	}
	path := c.abs(e)
	quest := ""
	if len(args) > 0 {
		quest = args[0]
	}
	if err := fs.Set("out", ""); err != nil {
		return nil, err
	}
	return func(resp *response) error {
		if resp.Code != exitOK {
			return nil
		}
		n := bytes.Count(resp.Stdout, []byte("\n"))
		if err := appendSync(path, resp.Stdout); err != nil {
			return fmt.Errorf("export: %d lines received from the daemon could not be written: %w", n, err)
		}
		resp.Stdout = nil
		var so, se bytes.Buffer
		if e.json {
			printJSON(&so, exportView{Quest: quest, Written: n, File: path})
		}
		exported(&se, quest, n, path)
		resp.Stdout, resp.Stderr = so.Bytes(), se.Bytes()
		return nil
	}, nil
}

func (c *exportCmd) abs(e *env) string {
	if filepath.IsAbs(c.out) {
		return c.out
	}
	return filepath.Join(e.cwd, c.out)
}

func appendSync(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (c *exportCmd) run(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("export", args, "QUEST"); err != nil {
		return err
	}
	if c.out != "" && e.inDaemon {
		return usagef("export --out: the daemon does not write files named in a request; the client writes them")
	}
	var n int
	var err error
	if c.out == "" {
		n, err = e.eng.Export(args[0], e.stdout)
	} else {
		n, err = e.eng.ExportFile(args[0], c.abs(e))
	}
	if err != nil {
		return err
	}
	where := "stdout"
	if c.out != "" {
		where = c.abs(e)
		if e.json {
			if err := printJSON(e.stdout, exportView{Quest: args[0], Written: n, File: where}); err != nil {
				return err
			}
		}
	}
	exported(e.stderr, args[0], n, where)
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
