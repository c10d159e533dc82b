package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/questbox/questbox/gates"
	"github.com/questbox/questbox/ui/api"
)

// submitCmd is `submit QUEST --node N [--in FILE|-]`. The exit code is the
// verdict: 0 PASS, 3 FAIL, 4 REVIEW. DEFERRED (the gate's network stage
// could not run: the box is offline, or a source had a transport error)
// exits 0 too: nothing is wrong with the answer, no try was consumed, and
// the engine keeps it and judges it again at a tick once the network is
// back, with no need to submit again. Scripts tell it from PASS by the
// first word of the output, or "outcome" in --json.
type submitCmd struct {
	node string
	in   string
}

func (c *submitCmd) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.node, "node", "", "the node answered (required)")
	fs.StringVar(&c.in, "in", "-", "read the answer from FILE (- is stdin)")
}

// cutNote says, when the answer was cut, how large it really was.
func cutNote(kept []byte, total int64) string {
	if total <= int64(len(kept)) {
		return ""
	}
	return fmt.Sprintf("questbox: the answer was %d bytes; the gate reads at most %d, so only the first %d were submitted\n",
		total, gates.MaxAnswerBytes, len(kept))
}

func (c *submitCmd) run(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("submit", args, "QUEST"); err != nil {
		return err
	}
	if c.node == "" {
		return usagef("submit needs --node N (see `questbox next %s`)", args[0])
	}
	// The answer is read whole before the API is reached: a slow agent
	// piping into submit holds neither the daemon nor the store.
	raw, total, err := e.readInput(c.in, maxAnswerInput)
	if err != nil {
		return err
	}
	res, err := e.door.api(ctx).Submit(ctx, args[0], c.node, raw)
	if err != nil {
		return err
	}
	fmt.Fprint(e.stderr, cutNote(raw, total))
	if e.json {
		if err := printJSON(e.stdout, res); err != nil {
			return err
		}
	} else {
		printVerdict(e, args[0], res)
		if res.Outcome == api.OutcomeDeferred {
			fmt.Fprintf(e.stdout, "deferred: %s\nno try consumed; the answer is kept and judged again at a tick once the network is back (no need to submit again)\n", res.Reason)
		}
	}
	switch res.Outcome {
	case api.OutcomeFail:
		return &exitError{Code: exitFail}
	case api.OutcomeReview:
		return &exitError{Code: exitReview}
	}
	return nil
}

func printVerdict(e *env, quest string, res api.Verdict) {
	w := e.stdout
	fmt.Fprintf(w, "%s  node %s is %s  (tries %d/%d)\n", res.Outcome, res.Node, res.Status, res.Tries, res.MaxTries)
	if res.Verdict != "" {
		fmt.Fprintf(w, "verdict: %s\n", res.Verdict)
	}
	writeFacts(w, "", res.Facts, res.Feedback, res.FeedbackAdds)
	if len(res.Children) > 0 {
		fmt.Fprintf(w, "new nodes: %s\n", strings.Join(res.Children, " "))
	}
	switch {
	case res.Outcome == api.OutcomeFail && res.Status == api.NodeExhausted:
		fmt.Fprintf(w, "the node used all its tries and is exhausted\n")
	case res.Outcome == api.OutcomeFail:
		fmt.Fprintf(w, "fix the facts above and submit again (`questbox next %s` shows them in the prompt)\n", quest)
	case res.Outcome == api.OutcomeReview:
		fmt.Fprintf(w, "awaiting human consent (long press on the button approves)\n")
	}
}
