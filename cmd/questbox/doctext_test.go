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
	cases := readCases(t, "testdata/doctext-cases.txt", 3)
	if len(cases) == 0 {
		t.Fatal("no cases read")
	}
	for _, tc := range cases {
		name, text := tc[0], tc[1]
		problems, err := strconv.Atoi(tc[2])
		if err != nil {
			t.Fatalf("%q: problems %q: %v", text, tc[2], err)
		}
		if got := docTextProblems(name, text); len(got) != problems {
			t.Errorf("%s %q: got %d problems %q, want %d", name, text, len(got), got, problems)
		}
	}
}

// readCases reads the tab-separated cases of file, each with n fields;
// lines starting with # and empty lines are skipped.
func readCases(t *testing.T, file string, n int) [][]string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for i, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != n {
			t.Fatalf("%s:%d: %d fields, want %d", file, i+1, len(f), n)
		}
		out = append(out, f)
	}
	return out
}
