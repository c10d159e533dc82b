package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/questbox/questbox/ui/api"
)

// questResultCmd is `quest result ID`: what the quest found, for a person
// at a terminal (docs/results.md); --json prints api.QuestResult.
type questResultCmd struct{}

func (c *questResultCmd) flags(*flag.FlagSet) {}

func (c *questResultCmd) run(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("quest result", args, "ID"); err != nil {
		return err
	}
	r, err := e.door.api(ctx).Result(ctx, args[0])
	if err != nil {
		return err
	}
	if e.json {
		return printJSON(e.stdout, r)
	}
	return writeResult(e.stdout, r)
}

// textWidth is the terminal the text output is written for.
const textWidth = 80

// writeResult prints r for a terminal of textWidth columns: every text of
// an agent's escaped (api.Printable) and wrapped.
func writeResult(out io.Writer, r api.QuestResult) error {
	w := &textWriter{w: out}
	w.line("", fmt.Sprintf("quest %s %q: %s", r.Quest, r.Name, r.Status))
	w.line("  ", "direction: "+r.Direction)
	if d := r.Ending; d != nil {
		text := d.Text
		if d.Reason != "" && d.How != "finish" {
			text += " (" + d.Reason + ")"
		}
		w.line("  ", text)
		if d.Statement != "" {
			w.line("  ", "the owner's closing statement:")
			w.block("    ", d.Statement, d.StatementCut)
		}
	}
	head := "findings: " + r.Headline
	if r.Open > 0 {
		head += fmt.Sprintf("; nodes still open: %d", r.Open)
	}
	w.line("  ", head)
	if len(r.Findings) == 0 && !r.Finished {
		w.line("  ", fmt.Sprintf("nothing has locked with a finding yet; `questbox quest show %s` shows the work so far", r.Quest))
	}
	for _, g := range []struct {
		kind, title string
		count       int
	}{
		{api.FindingConclusion, "CONCLUSIONS", r.Counts.Conclusions},
		{api.FindingGrowing, "GROWING, KEPT", r.Counts.Growing},
		{api.FindingDeadEnd, "DEAD ENDS", r.Counts.DeadEnds},
	} {
		if len(r.Findings) == 0 {
			break
		}
		w.line("", "")
		w.line("", fmt.Sprintf("%s (%d)", g.title, g.count))
		if g.count == 0 {
			w.line("  ", "none")
		}
		for _, f := range r.Findings {
			if f.Kind == g.kind {
				writeFinding(w, f)
			}
		}
	}
	if len(r.Closed) > 0 {
		w.line("", "")
		w.line("", fmt.Sprintf("CLOSED WITHOUT A FINDING (%d)", r.Counts.Closed))
		for _, c := range r.Closed {
			w.line("  ", fmt.Sprintf("%s, %s, %s: %s", c.Node, c.Role, c.Status, c.Hypothesis))
			w.line("    ", c.Reason)
		}
		if r.ClosedMore > 0 {
			w.line("  ", fmt.Sprintf("and %d more: `questbox quest show %s` lists them", r.ClosedMore, r.Quest))
		}
	}
	return w.err
}

// writeFinding prints one finding: who produced it, what it claims, how
// it got through the gate, its evidence and its citations.
func writeFinding(w *textWriter, f api.Finding) {
	w.line("", "")
	if t := f.Team; t != nil {
		w.line("  ", fmt.Sprintf("%s: %s Team, %s", f.Node, t.Kind, f.Status))
		by := "delivered by executer " + t.Executer + ", accepted by accepter " + t.Accepter
		if t.Executer == "" {
			by = "its stages are no longer in the store"
		}
		if t.Revisions > 0 {
			by += fmt.Sprintf("; revisions before the accept: %d", t.Revisions)
		}
		w.line("    ", by)
	} else {
		w.line("  ", fmt.Sprintf("%s: %s, %s", f.Node, f.Role, f.Status))
	}
	w.line("    ", "hypothesis: "+f.Hypothesis)
	gate := "gate: " + string(f.Gate)
	if a := f.Approval; a != nil {
		gate += fmt.Sprintf(", %s at %s", a.Text, a.At.Local().Format(time.DateTime))
		if a.Node != f.Node {
			gate += " (on " + a.Node + ")"
		}
	}
	w.line("    ", gate)
	if f.Why != "" {
		w.line("      ", f.Why)
	}
	for _, fact := range f.Review {
		w.line("      ", fact.Text)
	}
	w.line("    ", "evidence:")
	w.block("      ", f.Evidence, f.EvidenceCut)
	if len(f.Citations) == 0 {
		w.line("    ", "citations: none")
		return
	}
	w.line("    ", "citations:")
	for i, c := range f.Citations {
		quote := "“" + c.Quote + "”"
		if c.Cut > 0 {
			quote += " (cut)"
		}
		w.line("      ", fmt.Sprintf("%d. %s", i+1, c.Source))
		w.block("         ", quote, "")
	}
	if f.CitationsMore > 0 {
		w.line("      ", fmt.Sprintf("and %d more: `questbox export` has them", f.CitationsMore))
	}
}

// textWriter writes wrapped lines and keeps the first error.
type textWriter struct {
	w   io.Writer
	err error
}

// line writes text wrapped to textWidth, its first line indented by
// indent and the rest by two more spaces.
func (t *textWriter) line(indent, text string) {
	for para := range strings.SplitSeq(api.Printable(text, true), "\n") {
		t.write(wrapText(para, textWidth, indent, indent+"  "))
	}
}

// block writes an agent's text, its paragraphs each wrapped and indented
// by indent, then the note of what was cut from it, if any.
func (t *textWriter) block(indent, text, cut string) {
	if text == "" {
		t.write([]string{indent + "(empty)"})
	}
	for para := range strings.SplitSeq(api.Printable(text, true), "\n") {
		t.write(wrapText(para, textWidth, indent, indent))
	}
	if cut != "" {
		t.write(wrapText(cut, textWidth, indent, indent))
	}
}

func (t *textWriter) write(lines []string) {
	for _, l := range lines {
		if t.err == nil {
			_, t.err = io.WriteString(t.w, l+"\n")
		}
	}
}
