package main

import (
	"strings"
	"testing"

	"github.com/questbox/questbox/ui/api"
)

// TestQuestShowPrintsEdges: the text of `quest show` has every edge its
// JSON has, as "from → to  relation".
func TestQuestShowPrintsEdges(t *testing.T) {
	data := dataDir(t)
	must(t, 0, "", "quest", "new", "ocr", "--direction", "free OCR for invoices", "--mode", "solo", "--provider", "external", "--data", data)
	must(t, 0, "", "scan", "q1", "tesseract jpn", "--data", data)
	must(t, 0, answer("promising", "tesseract reads the totals of all twenty invoices.", "tesseract with a layout model"),
		"submit", "q1", "--node", "n1", "--data", data)
	var d api.QuestDetail
	decode(t, must(t, 0, "", "quest", "show", "q1", "--json", "--data", data), &d)
	if len(d.Edges) == 0 {
		t.Fatalf("quest show --json has no edges: %+v", d)
	}
	text := must(t, 0, "", "quest", "show", "q1", "--data", data).stdout
	if !strings.Contains(text, "\nedges:\n") {
		t.Errorf("quest show has no edges section:\n%s", text)
	}
	for _, ed := range d.Edges {
		line := ed.From + " → " + ed.To
		i := strings.Index(text, line)
		if i < 0 {
			t.Errorf("quest show does not print the edge %s %s:\n%s", line, ed.Relation, text)
			continue
		}
		rest, _, _ := strings.Cut(text[i:], "\n")
		if !strings.HasSuffix(rest, " "+string(ed.Relation)) {
			t.Errorf("got edge line %q, want it to end in %q", rest, ed.Relation)
		}
	}
}

// TestStopAndResumeNameTheCLI: a quest stopped and resumed from the CLI
// says so ("owner" is a role, not where a command came from).
func TestStopAndResumeNameTheCLI(t *testing.T) {
	data := dataDir(t)
	must(t, 0, "", "quest", "new", "ocr", "--direction", "free OCR for invoices", "--provider", "external", "--data", data)
	must(t, 0, "", "quest", "stop", "q1", "--data", data)
	if out := must(t, 0, "", "quest", "show", "q1", "--data", data).stdout; !strings.Contains(out, `quest q1 "ocr": stopped (stopped via cli)`) {
		t.Errorf("quest show after quest stop:\n%s\nwant it stopped via cli", out)
	}
	must(t, 0, "", "quest", "resume", "q1", "--data", data)
	var q api.Status
	decode(t, must(t, 0, "", "status", "q1", "--json", "--data", data), &q)
	if q.Reason != "resumed via cli" {
		t.Errorf("got reason %q after quest resume, want %q", q.Reason, "resumed via cli")
	}
}
