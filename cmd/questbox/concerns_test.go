package main

import (
	"os"
	"os/exec"
	"path"
	"regexp"
	"strings"
	"testing"
)

// The README's "Where each concern lives" is a map of the tree: every
// folder it names exists, and every package of the module is on it,
// named by its path or, under a folder the map names, by its last
// element in that folder's description. Test support (a package named
// *test) and the benchmark harnesses under bench/ are left out.
func TestREADMEMapsEveryPackage(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "## Where each concern lives")
	if !ok {
		t.Fatal(`README.md has no "## Where each concern lives"`)
	}
	_, rest, _ = strings.Cut(rest, "```\n")
	block, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatal("the map's block is not closed")
	}
	// entries: a folder at the start of a line, then what it holds (with
	// the indented lines that follow).
	entries := map[string]string{}
	var last string
	for line := range strings.Lines(block) {
		if f := strings.Fields(line); len(f) > 0 && !strings.HasPrefix(line, " ") && strings.HasSuffix(f[0], "/") {
			last = strings.TrimSuffix(f[0], "/")
			entries[last] = strings.Join(f[1:], " ")
			if st, err := os.Stat("../../" + last); err != nil || !st.IsDir() {
				t.Errorf("the README's map names %s/, which is not a folder", last)
			}
			continue
		}
		if last != "" {
			entries[last] += " " + strings.TrimSpace(line)
		}
	}
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", "github.com/questbox/questbox/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root = path.Dir(path.Dir(root))
	packages := 0
	for _, dir := range strings.Fields(string(out)) {
		rel := strings.TrimPrefix(strings.TrimPrefix(dir, root), "/")
		if rel == "" || strings.HasSuffix(rel, "test") || strings.HasPrefix(rel, "bench/") || strings.Contains(rel, "/internal/") {
			continue
		}
		packages++
		if _, ok := entries[rel]; ok {
			continue
		}
		named := false
		for p := path.Dir(rel); p != "." && !named; p = path.Dir(p) {
			desc, ok := entries[p]
			word := regexp.MustCompile(`\b` + regexp.QuoteMeta(strings.TrimPrefix(rel, p+"/")) + `\b`)
			named = ok && word.MatchString(desc)
		}
		if !named {
			t.Errorf("the README's map does not name package %s: add it, or its name to its folder's line", rel)
		}
	}
	if packages < 20 {
		t.Fatalf("go list gave %d packages to check; the walk missed the module", packages)
	}
}
