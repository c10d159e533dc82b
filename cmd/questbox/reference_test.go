package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/questbox/questbox/internal/reference"
)

// updateRefs rewrites the generated pages (the name update is the
// update package's here).
var updateRefs = flag.Bool("update", false, "rewrite docs/reference/cli.md and questbox.1")

const (
	cliReferencePage = "../../docs/reference/cli.md"
	manPage          = "../../docs/reference/questbox.1"
)

// TestReferenceCLI generates docs/reference/cli.md from the help's
// source (help.go: the verbs under their headings, each verb's flags,
// the global flags, the exit codes) and fails when the committed page
// differs: a verb or a flag in the code and not on the page, or the
// other way round. -update rewrites it.
func TestReferenceCLI(t *testing.T) {
	page := cliReference()
	if err := reference.Lint(page); err != nil {
		t.Error(err)
	}
	reference.Check(t, cliReferencePage, []byte(page), *updateRefs)
	for _, v := range verbs() {
		if !strings.Contains(page, "### `questbox "+v.name) {
			t.Errorf("%s has no section for %s", cliReferencePage, v.name)
		}
		for _, f := range verbFlagDocs(v) {
			if !strings.Contains(page, "| "+reference.Code(f.String())+" |") {
				t.Errorf("%s: %s lacks %s", cliReferencePage, v.name, f)
			}
		}
	}
}

// cliReference is the page.
func cliReference() string {
	var b strings.Builder
	b.WriteString(reference.Header("Command-line reference",
		"`questbox VERB [ARGS] "+globalUsage+"`\n\n"+
			"`questbox -h` lists the verbs, `questbox VERB -h` shows one verb's usage and flags (with the\n"+
			"defaults your config gives them), and `man questbox` says the same. A flag may come before or\n"+
			"after the positional arguments; `--` ends the flags."))
	flagTable := func(fs []flagDoc) {
		var rows [][]string
		for _, f := range fs {
			rows = append(rows, []string{reference.Code(f.String()), reference.Code(f.def), reference.Cell(capitalize(f.usage))})
		}
		reference.Table(&b, []string{"flag", "default", "meaning"}, rows)
	}
	b.WriteString("\n## Flags of every verb\n\nBefore the verb or after it: `questbox --data ./data quest list` is `questbox quest list --data ./data`.\n\n")
	flagTable(append(globalFlagDocs(), flagDoc{name: "version", usage: versionUsage + " (before the verb only)"}))
	for _, s := range sections() {
		fmt.Fprintf(&b, "\n## %s\n", s.title)
		for _, v := range s.verbs {
			fmt.Fprintf(&b, "\n### `%s`\n\n%s.", strings.TrimSpace("questbox "+v.name+" "+v.usage), reference.Cell(capitalize(v.summary)))
			if v.mode == standalone {
				b.WriteString(" Runs in this process, never through the daemon.")
			}
			b.WriteString("\n")
			if fs := verbFlagDocs(v); len(fs) > 0 {
				b.WriteString("\n")
				flagTable(fs)
			}
		}
	}
	b.WriteString("\n## Exit codes\n\n")
	var rows [][]string
	for _, c := range exitCodes() {
		rows = append(rows, []string{fmt.Sprint(c.code), reference.Cell(capitalize(c.meaning))})
	}
	reference.Table(&b, []string{"code", "meaning"}, rows)
	return b.String()
}

// TestReferenceMan: `questbox help --man` writes questbox(1) from the
// help's source, docs/reference/questbox.1 is that page (the .deb and
// the image install it; -update rewrites it), it names every verb and
// flag, and man renders it without a warning.
func TestReferenceMan(t *testing.T) {
	r := must(t, 0, "", "help", "--man")
	reference.Check(t, manPage, []byte(r.stdout), *updateRefs)
	for _, v := range verbs() {
		if !strings.Contains(r.stdout, `\fBquestbox `+roff(v.name)+`\fR`) {
			t.Errorf("the man page has no entry for %s", v.name)
		}
		for _, f := range verbFlagDocs(v) {
			if !strings.Contains(r.stdout, `\-\-`+roff(f.name)) {
				t.Errorf("the man page lacks %s %s", v.name, f)
			}
		}
	}
	if _, err := exec.LookPath("man"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("rendering the man page needs man (apt-get install man-db groff-base): %v", err)
		}
		t.Skipf("rendering the man page needs man: %v", err)
	}
	cmd := exec.Command("man", "--warnings", "-l", manPage)
	cmd.Env = append(os.Environ(), "MANWIDTH=80", "MANPAGER=cat", "PAGER=cat")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		t.Fatalf("man -l %s: %v\n%s", manPage, err, stderr.String())
	}
	rendered := strings.Join(strings.Fields(stdout.String()), " ") // justified: spaces vary
	for _, want := range []string{"QUESTBOX(1)", "questbox quest new NAME --direction TEXT", "EXIT STATUS"} {
		if !strings.Contains(rendered, want) {
			t.Errorf("the rendered page lacks %q:\n%s", want, stdout.String())
		}
	}
}

// TestEveryVerbHasAGroup: `questbox -h` shows every verb under one of
// its headings (a verb added to the registry needs its first word in
// verbGroups), and each heading names verbs that exist.
func TestEveryVerbHasAGroup(t *testing.T) {
	for _, v := range verbs() {
		first, _, _ := strings.Cut(v.name, " ")
		n := 0
		for _, g := range verbGroups() {
			if slices.Contains(g.words, first) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("verb %q is under %d headings of verbGroups (help.go), want 1: add %q to one", v.name, n, first)
		}
	}
	for _, g := range verbGroups() {
		for _, w := range g.words {
			if !slices.ContainsFunc(verbs(), func(v verb) bool { return v.name == w || strings.HasPrefix(v.name, w+" ") }) {
				t.Errorf("heading %q names %q, which is no verb", g.title, w)
			}
		}
	}
	out := must(t, 0, "", "-h").stdout
	for _, s := range sections() {
		if s.title == "Other" {
			t.Errorf("`questbox -h` has verbs under Other: %v", s.verbs)
		}
		if !strings.Contains(out, "\n"+strings.ToUpper(s.title)+"\n") {
			t.Errorf("`questbox -h` lacks the heading %s:\n%s", s.title, out)
		}
	}
	for _, v := range verbs() {
		if !strings.Contains(out, "  "+v.name+"  ") {
			t.Errorf("`questbox -h` does not list %s:\n%s", v.name, out)
		}
	}
}

// TestGlobalFlagsAnywhere: --data, --config and --json work before the
// verb and after it, the same way; --version is `questbox version`.
func TestGlobalFlagsAnywhere(t *testing.T) {
	data := dataDir(t)
	cfg := writeConfig(t, "")
	must(t, 0, "", "quest", "new", "ocr", "--direction", "free OCR", "--data", data)
	want := must(t, 0, "", "quest", "list", "--data", data, "--config", cfg, "--json").stdout
	if !strings.Contains(want, `"ocr"`) {
		t.Fatalf("quest list --json printed %q", want)
	}
	for _, args := range [][]string{
		{"--data", data, "--config", cfg, "--json", "quest", "list"},
		{"--json", "quest", "list", "--data", data, "--config", cfg},
		{"--data", data, "quest", "list", "--json", "--config", cfg},
		{"quest", "list", "--config", cfg, "--json", "--data", data},
	} {
		if got := must(t, 0, "", args...).stdout; got != want {
			t.Errorf("questbox %s printed\n%s\nwant, as with the flags after the verb:\n%s", strings.Join(args, " "), got, want)
		}
	}
	// After the verb, a flag overrides the same flag before it.
	if got := must(t, 0, "", "--data", t.TempDir(), "quest", "list", "--data", data, "--config", cfg, "--json").stdout; got != want {
		t.Errorf("--data after the verb did not win: %s", got)
	}

	version := must(t, 0, "", "version").stdout
	if got := must(t, 0, "", "--version").stdout; got != version || !strings.HasPrefix(got, "questbox ") {
		t.Errorf("--version printed %q, want what `questbox version` prints: %q", got, version)
	}
	if got := must(t, 0, "", "--version", "--json").stdout; !strings.Contains(got, `"version": "dev"`) {
		t.Errorf("--version --json printed %q", got)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--version", "quest", "list"}, "--version takes no verb"},
		{[]string{"--colour", "quest", "list"}, "before the verb come only --data, --config, --json and --version"},
	} {
		if r := must(t, 1, "", tc.args...); !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%q: stderr %q, want %q", tc.args, r.stderr, tc.want)
		}
	}
}
