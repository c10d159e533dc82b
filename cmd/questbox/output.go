package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/questbox/questbox/gates"
	"github.com/questbox/questbox/ui/api"
)

// printJSON writes v as indented JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func table(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0) }

// Bounds on what the CLI reads as input. An answer beyond the gate's
// limit is a FAIL whatever follows, so only one byte more is kept; a
// hypotheses file has no use for more than a mebibyte.
const (
	maxAnswerInput     = gates.MaxAnswerBytes + 1
	maxHypothesesInput = 1 << 20
)

// readInput reads name ("" or "-" is stdin, a path is relative to the
// invoking process's working directory), keeping at most limit bytes; total
// is the input's whole size, counted without keeping the excess.
func (e *env) readInput(name string, limit int64) (b []byte, total int64, err error) {
	var r io.Reader = e.stdin
	if name != "" && name != "-" {
		if !filepath.IsAbs(name) {
			name = filepath.Join(e.cwd, name)
		}
		f, err := os.Open(name)
		if err != nil {
			return nil, 0, usagef("%v", err)
		}
		defer f.Close()
		r = f
	}
	b, err = io.ReadAll(io.LimitReader(r, limit))
	if err != nil {
		return nil, 0, usagef("read %s: %v", inputName(name), err)
	}
	rest, err := io.Copy(io.Discard, r)
	if err != nil {
		return nil, 0, usagef("read %s: %v", inputName(name), err)
	}
	return b, int64(len(b)) + rest, nil
}

func inputName(name string) string {
	if name == "" || name == "-" {
		return "stdin"
	}
	return name
}

// factLine renders a fact without its level, which the caller shows.
func factLine(f api.Fact) string {
	s := f.Text
	for _, p := range []string{"FAIL ", "REVIEW "} {
		if strings.HasPrefix(s, p) {
			return strings.TrimPrefix(s, p)
		}
	}
	return s
}

// formatEvent renders one event as a line for a terminal:
//
//	12:00:05 q1 n3 scout       pending → running
//	12:00:06 q1 n8 accepter    pending → running  [Team n5 accept]
//	12:00:07 q1 n3 verdict FAIL  contract @ evidence: expected …
func formatEvent(ev api.Event) string {
	ts := ev.Time.Local().Format("15:04:05")
	var b strings.Builder
	switch ev.Kind {
	case api.KindNode:
		from := ev.From
		if from == "" {
			from = "new"
		}
		fmt.Fprintf(&b, "%s %s %s %-10s %s → %s", ts, ev.Quest, ev.Node, ev.Role, from, ev.To)
		if ev.Team != "" {
			fmt.Fprintf(&b, "  [Team %s %s]", ev.Team, ev.Stage)
		}
		if ev.Phase != "" {
			fmt.Fprintf(&b, "  [%s phase]", ev.Phase)
		}
		if ev.Reason != "" {
			fmt.Fprintf(&b, "  (%s)", oneLine(ev.Reason, 100))
		}
	case api.KindVerdict:
		fmt.Fprintf(&b, "%s %s %s verdict ", ts, ev.Quest, ev.Node)
		indent := strings.Repeat(" ", b.Len())
		b.WriteString(ev.Outcome)
		for i, f := range ev.Facts {
			if i == 0 {
				fmt.Fprintf(&b, "  %s", factLine(f))
				continue
			}
			fmt.Fprintf(&b, "\n%s%s", indent, f.Text)
		}
	case api.KindQuest:
		from := ev.From
		if from == "" {
			from = "new"
		}
		fmt.Fprintf(&b, "%s %s quest %s → %s", ts, ev.Quest, from, ev.To)
		if ev.Reason != "" {
			fmt.Fprintf(&b, "  (%s)", oneLine(ev.Reason, 160))
		}
	case api.KindConsent:
		fmt.Fprintf(&b, "%s %s %s consent %s", ts, ev.Quest, ev.Node, ev.Outcome)
		if ev.Reason != "" {
			fmt.Fprintf(&b, "  (%s)", oneLine(ev.Reason, 160))
		}
	default:
		fmt.Fprintf(&b, "%s %s %s", ts, ev.Kind, ev.Outcome)
		if ev.Detail != "" {
			fmt.Fprintf(&b, "  %s", oneLine(ev.Detail, 160))
		}
	}
	return b.String()
}

// oneLine collapses whitespace and cuts s to n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// dur renders a duration in whole seconds, truncated.
func dur(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	return d.Truncate(time.Second).String() // whole seconds, truncated, as the API's views
}

// writeFacts prints facts one per line, then the canonical feedback when it
// says more than the facts do (adds), each line indented under its
// heading and otherwise byte for byte as the agent's next prompt has it
// (`submit` and `quest show` both print it this way).
func writeFacts(w io.Writer, indent string, facts []api.Fact, feedback string, adds bool) {
	for _, f := range facts {
		fmt.Fprintf(w, "  %s\n", f.Text)
	}
	if !adds {
		return
	}
	// The feedback's own lines (root cause, what to clear) sit under
	// their heading, as the facts do; the text is the prompt's, line by line.
	fmt.Fprintf(w, "%sfeedback:\n", indent)
	for line := range strings.SplitSeq(strings.TrimSuffix(feedback, "\n"), "\n") {
		fmt.Fprintf(w, "%s  %s\n", indent, line)
	}
}
