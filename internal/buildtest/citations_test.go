package buildtest

import (
	"bytes"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A comment says why in place, or cites docs/design.md: the design lives
// in the repository, so a reader of the code never needs a tracker, a
// benchmark's history or a document that ships elsewhere
// (docs/design.md, "Comments and the design").

// badCitations are what a comment must not cite, each with what it is.
// They are precise on purpose: "404", "#" in a URL or a kernel's
// "#1 SMP", "the second passes" and "a second pass" are ordinary text;
// the benchmarks' passes went far beyond the second.
var badCitations = []struct {
	what string
	re   *regexp.Regexp
}{
	{"an issue number", regexp.MustCompile(`\b[Ii]ssues? #?\d+|\(#\d+\)|\[\d+/\d+\]`)},
	{"a bench pass", regexp.MustCompile(`\bbench pass|\b(?:third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|fourteenth|fifteenth|\d+(?:st|nd|rd|th)) pass\b|\bpass(?:es)? of issue`)},
	{"the outside specification", regexp.MustCompile(`\bSPEC\b|§`)},
	{"an outside document", regexp.MustCompile(`\bseeds/|\bkage\b|\breins\b|\bSTYLE(?:\.md| habit)|/work/shared`)},
}

// designCitation is a comment's citation of docs/design.md: the file, a
// comma and the headings of one or more sections, each in double quotes
// (`docs/design.md, "The tick", "Loop control"`).
var designCitation = regexp.MustCompile(`docs/design\.md, ("[^"]+"(?:(?:,| and) "[^"]+")*)`)

// quoted is one heading of a designCitation.
var quoted = regexp.MustCompile(`"([^"]+)"`)

// comment is one comment of a file, its lines joined by spaces so that a
// citation broken over two lines is still seen whole.
type comment struct {
	file  string
	line  int // of the comment's first line
	text  string
	lines []int // lines[i] is the offset in text where line+i starts
}

// lineOf is the line of the byte at offset off of c.text.
func (c comment) lineOf(off int) int {
	n := 0
	for i, start := range c.lines {
		if start <= off {
			n = i
		}
	}
	return c.line + n
}

func (c *comment) add(text string) {
	if c.text != "" {
		c.text += " "
	}
	c.lines = append(c.lines, len(c.text))
	c.text += text
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(gomod)))
}

// goComments are the comment groups of a Go file, each one comment.
func goComments(fset *token.FileSet, rel string, src []byte) ([]comment, error) {
	f, err := parser.ParseFile(fset, rel, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []comment
	for _, g := range f.Comments {
		c := comment{file: rel, line: fset.Position(g.Pos()).Line}
		for _, x := range g.List {
			text := strings.TrimPrefix(x.Text, "//")
			text = strings.TrimPrefix(strings.TrimSuffix(text, "*/"), "/*")
			for _, l := range strings.Split(text, "\n") {
				c.add(strings.TrimSpace(l))
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// hashComment is where a # comment starts on a line of a shell script,
// a Makefile or a unit file: at the start or after a blank ("${#a[@]}"
// is not one).
var hashComment = regexp.MustCompile(`(?:^|\s)#`)

// hashComments are the # comments of a text file, a run of comment lines
// one comment.
func hashComments(rel string, src []byte) []comment {
	var out []comment
	var cur *comment
	for i, l := range strings.Split(string(src), "\n") {
		loc := hashComment.FindStringIndex(l)
		if loc == nil {
			cur = nil
			continue
		}
		whole := strings.TrimSpace(l[:loc[0]]) == ""
		if cur == nil || !whole {
			out = append(out, comment{file: rel, line: i + 1})
			cur = &out[len(out)-1]
		}
		cur.add(strings.TrimSpace(strings.TrimLeft(l[loc[1]-1:], "#")))
		if !whole {
			cur = nil
		}
	}
	return out
}

// moduleComments are the comments of every Go file of the module, tests
// included, and of the Makefile and the files under scripts/, image/ and
// systemd/.
func moduleComments(t *testing.T) []comment {
	t.Helper()
	root := moduleRoot(t)
	fset := token.NewFileSet()
	var all []comment
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		top, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		isGo := strings.HasSuffix(path, ".go")
		if !isGo && rel != "Makefile" && top != "scripts" && top != "image" && top != "systemd" {
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if isGo {
			cs, err := goComments(fset, rel, src)
			all = append(all, cs...)
			return err
		}
		if bytes.IndexByte(src, 0) < 0 {
			all = append(all, hashComments(rel, src)...)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 1000 {
		t.Fatalf("found %d comments in the module; the walk missed its files", len(all))
	}
	return all
}

func TestCommentsCiteNoIssueBenchPassOrOutsideFile(t *testing.T) {
	var bad []string
	for _, c := range moduleComments(t) {
		for _, b := range badCitations {
			for _, loc := range b.re.FindAllStringIndex(c.text, -1) {
				bad = append(bad, fmt.Sprintf("%s:%d: cites %s: %q", c.file, c.lineOf(loc[0]), b.what, c.text[loc[0]:loc[1]]))
			}
		}
	}
	if len(bad) > 0 {
		t.Errorf("%d comments cite what a reader cannot open; say why in place or cite docs/design.md:\n%s",
			len(bad), strings.Join(bad, "\n"))
	}
}

func TestCommentsCiteSectionsDesignHas(t *testing.T) {
	design, err := os.ReadFile(filepath.Join(moduleRoot(t), "docs", "design.md"))
	if err != nil {
		t.Fatal(err)
	}
	headings := map[string]bool{}
	for _, l := range strings.Split(string(design), "\n") {
		if h, ok := strings.CutPrefix(l, "#"); ok {
			headings[strings.TrimSpace(strings.TrimLeft(h, "#"))] = true
		}
	}
	var bad []string
	cited := 0
	for _, c := range moduleComments(t) {
		for _, m := range designCitation.FindAllStringSubmatchIndex(c.text, -1) {
			for _, h := range quoted.FindAllStringSubmatch(c.text[m[2]:m[3]], -1) {
				cited++
				if !headings[h[1]] {
					bad = append(bad, fmt.Sprintf("%s:%d: docs/design.md has no section %q", c.file, c.lineOf(m[0]), h[1]))
				}
			}
		}
	}
	if cited == 0 {
		t.Fatal("no comment cites docs/design.md; the pattern is broken")
	}
	if len(bad) > 0 {
		t.Errorf("%d citations name no heading of docs/design.md:\n%s", len(bad), strings.Join(bad, "\n"))
	}
}

func TestCitationPatterns(t *testing.T) {
	b, err := os.ReadFile("testdata/citation-cases.txt")
	if err != nil {
		t.Fatal(err)
	}
	cases := 0
	for i, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		want, text, ok := strings.Cut(line, "\t")
		if !ok || want != "bad" && want != "ok" {
			t.Fatalf("testdata/citation-cases.txt:%d: want bad or ok, a tab and the text: %q", i+1, line)
		}
		cases++
		bad := false
		for _, b := range badCitations {
			bad = bad || b.re.MatchString(text)
		}
		if bad != (want == "bad") {
			t.Errorf("%q flagged %v, want %v", text, bad, want == "bad")
		}
	}
	if cases == 0 {
		t.Fatal("no cases read")
	}
}
