package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// docTextRule is a kind of text a user's page must not carry: it speaks
// of how the project was built (an issue, a benchmark's pass, an outside
// specification) instead of what the box does.
type docTextRule struct {
	what string
	re   *regexp.Regexp
	// design reports whether the rule holds in docs/design.md too, the
	// design document, which may tell how a decision was measured.
	design bool
}

var docTextRules = []docTextRule{
	{"an issue number", regexp.MustCompile(`(?i)\b(?:issues?|pull requests?|PRs?)\s*#?\d+|\(#\d+\)`), true},
	{"an outside specification", regexp.MustCompile(`\bSPEC\b|§`), true},
	// "a second pass" is plain English; the benchmarks' passes went far beyond.
	{"a benchmark's pass", regexp.MustCompile(`(?i)\b(?:third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|\d+(?:st|nd|rd|th))\s+pass\b`), false},
	{"another project's name for a version (kage)", regexp.MustCompile(`(?i)\bkage\b`), false},
	{"another project's name (reins)", regexp.MustCompile(`(?i)\breins\b`), false},
}

// authorityLevel is L1, L2 or L3; whoDecides is where they are explained.
var (
	authorityLevel = regexp.MustCompile(`\bL[123]\b`)
	whoDecides     = "gates.md#who-decides-l1-l2-and-l3"
)

// docTextProblems lists what a page's text breaks, one line each.
func docTextProblems(name, text string) []string {
	var out []string
	design := name == "docs/design.md"
	for i, line := range strings.Split(text, "\n") {
		for _, r := range docTextRules {
			if design && !r.design {
				continue
			}
			if m := r.re.FindString(line); m != "" {
				out = append(out, name+":"+strconv.Itoa(i+1)+": "+r.what+": "+m)
			}
		}
	}
	// The levels of authority are jargon: a page that names one links to
	// their explanation (generated reference pages and the design document
	// aside; gates.md is the explanation).
	if !design && !strings.HasPrefix(name, "docs/reference/") && name != "docs/gates.md" {
		if m := authorityLevel.FindString(text); m != "" && !strings.Contains(text, whoDecides) {
			out = append(out, name+": names "+m+" without a link to "+whoDecides)
		}
	}
	return out
}

// TestDocsSpeakToUsers: README.md and the pages under docs/ carry no
// issue numbers, benchmark passes, outside specifications or other
// projects' names, and explain L1, L2 and L3 where they use them.
// docs/design.md is held to the first two only. Figures a user needs are
// stated on the page, with bench/RESULTS.md for how they were measured.
func TestDocsSpeakToUsers(t *testing.T) {
	for _, name := range userDocs(t) {
		text, err := os.ReadFile(filepath.Join(repoRoot, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range docTextProblems(name, string(text)) {
			t.Error(p)
		}
	}
}

// TestDocTextRules pins what the rules catch and what they leave alone.
func TestDocTextRules(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		problems   int
	}{
		{"docs/x.md", "fixed in issue 23", 1},
		{"docs/x.md", "see #12 and (#12)", 1},
		{"docs/x.md", "Issue 23: a memory limit, eleventh pass", 2},
		{"docs/x.md", "as SPEC §2.8 says", 1},
		{"docs/x.md", "Teams (kage v3.2) and the reins", 2},
		{"docs/x.md", "a private key in PKCS #8 PEM; a second pass over the list", 0},
		{"docs/x.md", "the L2 judge", 1},
		{"docs/x.md", "the L2 judge ([gates.md](gates.md#who-decides-l1-l2-and-l3))", 0},
		{"docs/gates.md", "the L2 judge", 0},
		{"docs/reference/config.md", "an L3 consent", 0},
		{"docs/design.md", "measured in the eleventh pass, with kage", 0},
		{"docs/design.md", "issue 23", 1},
	} {
		if got := docTextProblems(tc.name, tc.text); len(got) != tc.problems {
			t.Errorf("%s %q: got %d problems %q, want %d", tc.name, tc.text, len(got), got, tc.problems)
		}
	}
}
