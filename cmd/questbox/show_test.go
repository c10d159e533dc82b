package main

import (
	"strings"
	"testing"
)

// TestFeedbackIsIndentedUnderItsHeading: `quest show` and `submit` print
// the feedback's lines (root cause, what to clear) under "feedback:", one
// level deeper, as the facts sit under their node.
func TestFeedbackIsIndentedUnderItsHeading(t *testing.T) {
	data := dataDir(t)
	must(t, 0, "", "quest", "new", "ocr", "--direction", "free OCR", "--provider", "external", "--data", data)
	must(t, 0, "", "scan", "q1", "tesseract jpn", "--data", data)
	sub := must(t, exitFail, answer("promising", "short"), "submit", "q1", "--node", "n1", "--in", "-", "--data", data)
	show := must(t, 0, "", "quest", "show", "q1", "--data", data)
	for _, tc := range []struct{ name, out, heading, indent string }{
		{"submit", sub.stdout, "feedback:", "  "},
		{"quest show", show.stdout, "  feedback:", "    "},
	} {
		_, block, ok := strings.Cut(tc.out, "\n"+tc.heading+"\n")
		if !ok {
			t.Fatalf("%s prints no %q heading:\n%s", tc.name, tc.heading, tc.out)
		}
		lines := 0
		for l := range strings.SplitSeq(strings.TrimSuffix(block, "\n"), "\n") {
			if strings.HasPrefix(l, "  last attempt") || (tc.name == "submit" && !strings.HasPrefix(l, " ")) {
				break
			}
			if !strings.HasPrefix(l, tc.indent) {
				t.Errorf("%s: feedback line %q is not indented by %q:\n%s", tc.name, l, tc.indent, tc.out)
			}
			lines++
		}
		if !strings.Contains(block, tc.indent+"root cause: ") || lines < 2 {
			t.Errorf("%s: the feedback has no indented root cause line:\n%s", tc.name, tc.out)
		}
	}
}
