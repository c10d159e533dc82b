package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// repoRoot is the repository, from this package's directory.
const repoRoot = "../.."

// userDocs are README.md and every Markdown page under docs/, as paths
// relative to the repository.
func userDocs(t *testing.T) []string {
	t.Helper()
	names := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(repoRoot, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, _ := filepath.Rel(repoRoot, path)
			names = append(names, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

var (
	// mdLink is an inline link or image: [text](target "title").
	mdLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	// mdRef is a reference definition: [name]: target.
	mdRef = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$`)
	// htmlLink is a link or an image in HTML: href="..." or src="...".
	htmlLink = regexp.MustCompile(`(?:href|src)="([^"]+)"`)
	// htmlAnchor is an anchor of HTML: <a name="x"> or id="x".
	htmlAnchor = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
	// inlineCode is inline code, whose brackets are no link.
	inlineCode = regexp.MustCompile("`+[^`]*`+")
	// scheme starts a URL: https:, mailto:.
	scheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// mdPage is what links need of a Markdown page: its links and its
// anchors, outside fenced code.
type mdPage struct {
	links   []mdTarget
	anchors map[string]bool
}

type mdTarget struct {
	line   int
	target string
}

// readMDPage reads a page's links and the anchors of its headings, as
// GitHub makes them: lower case, punctuation dropped, spaces as hyphens,
// a repeated heading's anchor numbered (-1, -2).
func readMDPage(text string) mdPage {
	p := mdPage{anchors: map[string]bool{}}
	seen := map[string]int{}
	fence := ""
	for i, l := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(l)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		if h, ok := strings.CutPrefix(l, "#"); ok {
			title := strings.TrimSpace(strings.TrimLeft(h, "#"))
			slug := slugOf(title)
			if n := seen[slug]; n > 0 {
				p.anchors[fmt.Sprintf("%s-%d", slug, n)] = true
			} else {
				p.anchors[slug] = true
			}
			seen[slug]++
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(l, -1) {
			p.anchors[m[1]] = true
		}
		prose := inlineCode.ReplaceAllString(l, "")
		var targets []string
		for _, m := range mdLink.FindAllStringSubmatch(prose, -1) {
			targets = append(targets, m[1])
		}
		if m := mdRef.FindStringSubmatch(prose); m != nil {
			targets = append(targets, m[1])
		}
		for _, m := range htmlLink.FindAllStringSubmatch(prose, -1) {
			targets = append(targets, m[1])
		}
		for _, target := range targets {
			p.links = append(p.links, mdTarget{i + 1, target})
		}
	}
	return p
}

// slugOf is a heading's anchor, as GitHub makes it.
func slugOf(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// external reports whether a target leaves the repository: a URL, a
// mail address.
func external(target string) bool {
	return scheme.MatchString(target) || strings.HasPrefix(target, "//")
}

// TestDocLinksResolve: every relative link of README.md and of the pages
// under docs/ (a file, a directory, a heading of a page, a heading of
// the page itself) names something that exists in the repository.
func TestDocLinksResolve(t *testing.T) {
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string]mdPage{}
	page := func(rel string) (mdPage, error) {
		if p, ok := pages[rel]; ok {
			return p, nil
		}
		text, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			return mdPage{}, err
		}
		pages[rel] = readMDPage(string(text))
		return pages[rel], nil
	}
	checked := 0
	for _, name := range userDocs(t) {
		p, err := page(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range p.links {
			if external(l.target) {
				continue
			}
			checked++
			path, anchor, _ := strings.Cut(l.target, "#")
			dest := name // a bare #anchor is the page's own
			if path != "" {
				dest = filepath.ToSlash(filepath.Join(filepath.Dir(name), path))
				if strings.HasPrefix(dest, "../") || filepath.IsAbs(path) {
					t.Errorf("%s:%d: %s leaves the repository", name, l.line, l.target)
					continue
				}
				if _, err := os.Stat(filepath.Join(root, dest)); err != nil {
					t.Errorf("%s:%d: %s: %s does not exist", name, l.line, l.target, dest)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(dest, ".md") {
				t.Errorf("%s:%d: %s: an anchor into %s, which is no Markdown page", name, l.line, l.target, dest)
				continue
			}
			dp, err := page(dest)
			if err != nil {
				t.Fatal(err)
			}
			if !dp.anchors[anchor] {
				t.Errorf("%s:%d: %s: %s has no heading #%s", name, l.line, l.target, dest, anchor)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link found: the link reader is broken")
	}
}

// TestReadMDPage pins the link reader on the forms a page uses.
func TestReadMDPage(t *testing.T) {
	p := readMDPage("# Getting started\n\n## Wi-Fi & the `password`\n\n## Wi-Fi & the `password`\n\n" +
		"See [the agents](docs/agents.md#claude-code), ![the box](docs/box.png \"a box\") and [up](#getting-started).\n" +
		"`[not](a-link.md)` <a href=\"docs/x.md\">x</a> <a name=\"flash\"></a>\n" +
		"```sh\n[no](fenced.md)\n# not a heading\n```\n" +
		"[ref]: docs/ref.md\n[web](https://example.com)\n")
	var got []string
	for _, l := range p.links {
		got = append(got, l.target)
	}
	want := []string{"docs/agents.md#claude-code", "docs/box.png", "#getting-started", "docs/x.md", "docs/ref.md", "https://example.com"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("links %q, want %q", got, want)
	}
	for _, a := range []string{"getting-started", "wi-fi--the-password", "wi-fi--the-password-1", "flash"} {
		if !p.anchors[a] {
			t.Errorf("no anchor %q in %v", a, p.anchors)
		}
	}
	if p.anchors["not-a-heading"] {
		t.Error("a line of a fenced block was taken for a heading")
	}
	if !external("https://example.com") || !external("mailto:x@y") || external("docs/x.md") || external("#a") {
		t.Error("external misjudges a target")
	}
}
