package main

import (
	"bufio"
	"bytes"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/questbox/questbox/internal/buildtest"
	"github.com/questbox/questbox/internal/daemon/daemontest"
)

// walkBlock is a fenced shell block of README.md or of a page under
// docs/ marked for the walk: the line before its fence is <!-- walk -->
// (run it) or <!-- walk: the daemon --> (the `make run` it shows is
// started, as the Makefile does).
type walkBlock struct {
	section string // the ## or ### heading it is under
	daemon  bool
	text    string
}

// walkBlocks cuts the marked blocks out of a README, in order.
func walkBlocks(readme string) []walkBlock {
	var out []walkBlock
	lines := strings.Split(readme, "\n")
	section := ""
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "## ") || strings.HasPrefix(l, "### ") {
			section = strings.TrimLeft(l, "# ")
		}
		if !strings.HasPrefix(l, "<!-- walk") || i+1 >= len(lines) || lines[i+1] != "```sh" {
			continue
		}
		b := walkBlock{section: section, daemon: strings.Contains(l, "the daemon")}
		var text []string
		for i += 2; i < len(lines) && lines[i] != "```"; i++ {
			text = append(text, lines[i])
		}
		b.text = strings.Join(text, "\n") + "\n"
		out = append(out, b)
	}
	return out
}

// need finds a program the walk runs; without it the walk is skipped,
// except under CI, which must run it.
func need(t *testing.T, prog string) {
	t.Helper()
	if _, err := exec.LookPath(prog); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the README walk needs %s: %v", prog, err)
		}
		t.Skipf("the README walk needs %s: %v", prog, err)
	}
}

// makeRun is the daemon of `make run`, as the Makefile starts it.
var makeRun = regexp.MustCompile(`(?m)^run:.*\n(?:\t.*\n)*?\t@?(\./bin/questbox run [^|\n]*?)\s*(\|\||\n)`)

// walkPage is a page with walk blocks.
type walkPage struct {
	name   string // README.md, docs/agents.md
	blocks []walkBlock
}

// walkPages are README.md and every page under docs/ that has walk
// blocks, README.md first.
func walkPages(t *testing.T) []walkPage {
	t.Helper()
	names := []string{"README.md"}
	err := filepath.WalkDir("../../docs", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			names = append(names, strings.TrimPrefix(filepath.ToSlash(path), "../../"))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var pages []walkPage
	for _, name := range names {
		text, err := os.ReadFile(filepath.Join("../..", name))
		if err != nil {
			t.Fatal(err)
		}
		if blocks := walkBlocks(string(text)); len(blocks) > 0 || name == "README.md" {
			pages = append(pages, walkPage{name: name, blocks: blocks})
		}
	}
	return pages
}

// TestREADMEWalk runs the marked shell blocks of README.md ("Two
// commands", the tour) and of each page under docs/ that has some (an
// external agent, MQTT, the dashboard's session API), as written:
// each page in a fresh directory beside the daemon `make run` starts (on
// a free port instead of 127.0.0.1:8080), its blocks in one shell, as a
// reader following that page in a second terminal would. The pages
// cannot drift from the program.
func TestREADMEWalk(t *testing.T) {
	for _, prog := range []string{"sh", "curl", "sed", "grep", "wc", "chmod"} {
		need(t, prog)
	}
	pages := walkPages(t)
	var sections []string
	for _, p := range pages {
		for _, b := range p.blocks {
			sections = append(sections, p.name+": "+b.section)
		}
		for i, b := range p.blocks {
			if b.daemon && i > 0 {
				t.Errorf("%s: the daemon's walk block (under %q) must be its first", p.name, b.section)
			}
		}
	}
	for _, want := range []string{
		"README.md: Two commands",
		"README.md: A five-minute tour",
		"docs/external-agent.md: Step by step",
		"docs/mqtt.md: Configuration (`[mqtt]`)",
		"docs/dashboard.md: The session API, for scripts",
	} {
		if !slices.Contains(sections, want) {
			t.Errorf("no walk block under %q (blocks under %q)", want, sections)
		}
	}
	readme := pages[0]
	if len(readme.blocks) == 0 || !readme.blocks[0].daemon || !strings.Contains(readme.blocks[0].text, "make run") {
		t.Fatalf("README.md's first walk block must be the daemon's (make run), got %+v", readme.blocks)
	}
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := makeRun.FindSubmatch(makefile)
	if m == nil {
		t.Fatal("the Makefile's run target does not start ./bin/questbox run")
	}
	daemonArgs := strings.Fields(string(m[1]))[1:] // after ./bin/questbox
	for _, p := range pages {
		blocks := p.blocks
		if len(blocks) > 0 && blocks[0].daemon {
			blocks = blocks[1:] // it is what walkOnePage starts
		}
		t.Run(p.name, func(t *testing.T) { walkOnePage(t, daemonArgs, blocks) })
	}
}

// walkOnePage runs blocks in a fresh directory beside a fresh daemon.
func walkOnePage(t *testing.T, daemonArgs []string, blocks []walkBlock) {
	// A fresh directory with bin/questbox, as `make run` leaves it.
	dir := daemontest.ShortDir(t)
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(buildtest.Questbox(t), filepath.Join(dir, "bin", "questbox")); err != nil {
		t.Fatal(err)
	}
	// The reader's environment: no questbox variables of the test run.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "QUESTBOX_") && !strings.HasPrefix(kv, "NOTIFY_SOCKET=") {
			env = append(env, kv)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()

	daemon := exec.Command(filepath.Join(dir, "bin", "questbox"), append(daemonArgs, "--listen", addr)...)
	daemon.Dir, daemon.Env = dir, env
	var daemonErr bytes.Buffer
	daemon.Stderr = &daemonErr
	out, err := daemon.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		daemon.Process.Signal(syscall.SIGINT)
		daemon.Wait()
	}
	t.Cleanup(stop)
	// The daemon says where its dashboard is once the engine runs.
	sc := bufio.NewScanner(out)
	for !strings.Contains(sc.Text(), "dashboard: http://"+addr+"/") {
		if !sc.Scan() {
			t.Fatalf("the daemon stopped before its dashboard line:\n%s", daemonErr.String())
		}
	}
	go io.Copy(io.Discard, out) // the events scroll on; nobody reads them

	var script strings.Builder
	script.WriteString("set -ex\n")
	for _, b := range blocks {
		script.WriteString("# " + b.section + "\n")
		script.WriteString(strings.ReplaceAll(b.text, "127.0.0.1:8080", addr))
	}
	sh := exec.Command("sh", "-c", script.String())
	sh.Dir, sh.Env = dir, env
	walked, err := sh.CombinedOutput()
	if err != nil {
		t.Fatalf("the walk failed: %v\n%s\n--- the daemon's log:\n%s", err, walked, daemonErr.String())
	}
	t.Logf("the walk:\n%s", walked)
	stop()
	if daemon.ProcessState.ExitCode() != 0 {
		t.Errorf("the daemon exited %d after Ctrl-C:\n%s", daemon.ProcessState.ExitCode(), daemonErr.String())
	}
	if r := qb(t, "", "verify", "--data", filepath.Join(dir, "data")); r.code != 0 {
		t.Errorf("verify after the walk: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
}
