package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
)

// scanCmd is `scan QUEST [HYPOTHESIS...|--from FILE]`.
type scanCmd struct{ from string }

func (c *scanCmd) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.from, "from", "", "read one hypothesis per non-empty line of FILE (- is stdin)")
}

func (c *scanCmd) run(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usagef("scan needs QUEST, then hypotheses as arguments or --from FILE")
	}
	quest, hyps := args[0], args[1:]
	if len(args) == 2 && args[1] == "-" && (c.from == "" || c.from == "-") {
		hyps, c.from = nil, "-" // QUEST - : from stdin, as --from -
	}
	if c.from != "" {
		b, err := e.hypotheses(c.from)
		if err != nil {
			return err
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			if line = strings.TrimSpace(line); line != "" {
				hyps = append(hyps, line)
			}
		}
	}
	if len(hyps) == 0 {
		return usagef("scan %s: no hypotheses given (arguments, or non-empty lines of --from FILE)", quest)
	}
	res, err := e.door.api(ctx).Scan(ctx, quest, hyps)
	if err != nil {
		return err
	}
	if e.json {
		return printJSON(e.stdout, res)
	}
	if len(res.Added) == 0 {
		fmt.Fprintln(e.stdout, "added 0")
	} else {
		fmt.Fprintf(e.stdout, "added %d: %s\n", len(res.Added), strings.Join(res.Added, " "))
	}
	fmt.Fprintf(e.stdout, "skipped %d (already in the quest)\n", len(res.Skipped))
	for _, h := range res.Skipped {
		fmt.Fprintf(e.stdout, "  %s\n", oneLine(h, 100))
	}
	return nil
}

// hypotheses reads a hypotheses file (or stdin), refusing one too large.
func (e *env) hypotheses(from string) ([]byte, error) {
	b, total, err := e.readInput(from, maxHypothesesInput)
	if err != nil {
		return nil, err
	}
	if total > int64(len(b)) {
		return nil, usagef("scan: %s is %d bytes; a hypotheses list may be at most %d (one hypothesis per line)", inputName(from), total, maxHypothesesInput)
	}
	return b, nil
}
