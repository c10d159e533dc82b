//go:build linux

package agent

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/questbox/questbox/internal/confine"
)

// confinedBox is a box's secrets in a temporary directory and a launcher
// that hides them, the test binary serving as the launcher (TestMain).
type confinedBox struct {
	l              *confine.Launcher
	data, secret   string
	project, other string
}

func newConfinedBox(t *testing.T) *confinedBox {
	t.Helper()
	root := t.TempDir()
	b := &confinedBox{data: filepath.Join(root, "data"), project: filepath.Join(root, "project"), other: filepath.Join(root, "other")}
	b.secret = filepath.Join(b.data, "questbox.db")
	for _, d := range []string{b.data, b.project, b.other} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(b.secret, []byte("SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := confine.New(confine.Config{Hidden: []string{b.data}, Runs: filepath.Join(root, "runs")})
	if err != nil {
		t.Fatal(err)
	}
	r := l.Probe(context.Background())
	if !r.Applied(confine.Landlock) || !r.Applied(confine.Namespaces) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("confinement is not whole here: %s", r)
		}
		t.Skipf("confinement is not whole here: %s", r)
	}
	b.l = l
	return b
}

// A confined command keeps the provider's contract (the prompt on stdin,
// the answer on stdout, the exit status and stderr's tail, the Started
// call) and runs in its project, which it may write, while the data
// directory and every other directory are out of its reach.
func TestConfinedCommandKeepsItsContract(t *testing.T) {
	b := newConfinedBox(t)
	c := mustNewCommand(t, CommandConfig{Name: "agent", Confine: b.l, Argv: shell(`
		read prompt
		echo "answer to $prompt from $(pwd)"
		echo done > answer.txt
		cat "$1" 2>&1 || echo "secret: refused"
		ls "$2" >/dev/null 2>&1 || echo "data: refused"
		{ echo x > "$3/escape"; } 2>/dev/null || echo "other: refused"
		echo tmp > "$TMPDIR/t" && echo "tmp: written"
		echo failing >&2
		exit 4`, b.secret, b.data, b.other)})
	started := false
	got, err := c.Run(context.Background(), Request{Prompt: "the question\n", Dir: b.project, Started: func() { started = true }})
	if err == nil || got.ExitCode != 4 || !strings.Contains(err.Error(), "exited with status 4: failing") {
		t.Fatalf("Run: %v (exit code %d), want exit status 4 quoting stderr", err, got.ExitCode)
	}
	out := string(got.Output)
	for _, want := range []string{"answer to the question from " + b.project, "secret: refused", "data: refused", "other: refused", "tmp: written"} {
		if !strings.Contains(out, want) {
			t.Errorf("output does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "SECRET") {
		t.Errorf("the agent read the secret:\n%s", out)
	}
	if b, err := os.ReadFile(filepath.Join(b.project, "answer.txt")); err != nil || string(b) != "done\n" {
		t.Errorf("project's answer.txt: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(b.other, "escape")); err == nil {
		t.Error("the agent wrote outside its project")
	}
	if !started {
		t.Error("Started was not called")
	}
}

// processesWith lists the pids of the processes whose command line holds
// mark.
func processesWith(t *testing.T, mark string) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && bytes.Contains(b, []byte(mark)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// noneLeft fails the test if a process marked mark is still there.
func noneLeft(t *testing.T, mark string) {
	t.Helper()
	if pids := processesWith(t, mark); len(pids) > 0 {
		for _, p := range pids {
			if pr, err := os.FindProcess(p); err == nil {
				pr.Kill()
			}
		}
		t.Errorf("processes %v outlived their run", pids)
	}
}

// Every process a confined run starts ends with it, including one that
// left the run's process group and session (setsid) and was orphaned by
// a double fork: the agent is PID 1 of its namespace. Unconfined, such a
// process escapes (TestCommandEscapedProcessDoesNotHangRun).
func TestConfinedCommandLeavesNoProcessBehind(t *testing.T) {
	b := newConfinedBox(t)
	mark := "qb-left-" + strconv.Itoa(os.Getpid()) + "-" + filepath.Base(filepath.Dir(b.project))
	escape := `(setsid sh -c "sleep 1000; : ` + mark + `" &) ; `
	t.Run("the agent exits", func(t *testing.T) {
		c := mustNewCommand(t, CommandConfig{Confine: b.l, Argv: shell(escape + "echo started")})
		got, err := c.Run(context.Background(), Request{Dir: b.project})
		if err != nil || string(got.Output) != "started\n" {
			t.Fatalf("Run: %q, %v", got.Output, err)
		}
		noneLeft(t, mark)
	})
	t.Run("the timeout kills", func(t *testing.T) {
		c := mustNewCommand(t, CommandConfig{Confine: b.l, Timeout: time.Second, Argv: shell(escape + "sleep 1000")})
		if _, err := c.Run(context.Background(), Request{Dir: b.project}); !errors.Is(err, ErrTimeout) {
			t.Fatalf("Run: %v, want ErrTimeout", err)
		}
		noneLeft(t, mark)
	})
}

// A quest without a project writes a scratch directory of its own, kept
// from one run to the next; another quest's runs cannot read it.
func TestConfinedCommandScratch(t *testing.T) {
	b := newConfinedBox(t)
	c := mustNewCommand(t, CommandConfig{Confine: b.l, Argv: shell(`cat note 2>/dev/null; pwd > note`)})
	if _, err := c.Run(context.Background(), Request{Quest: "q1"}); err != nil {
		t.Fatal(err)
	}
	second, err := c.Run(context.Background(), Request{Quest: "q1"})
	if err != nil {
		t.Fatal(err)
	}
	dir, err := b.l.Scratch("q1")
	if err != nil {
		t.Fatal(err)
	}
	if want := dir + "\n"; !strings.HasPrefix(string(second.Output), want) {
		t.Errorf("second run of q1 read %q, want the note %q its first run left", second.Output, want)
	}
	other := mustNewCommand(t, CommandConfig{Confine: b.l, Argv: shell(`cat "$1"/note 2>/dev/null || echo refused`, dir)})
	got, err := other.Run(context.Background(), Request{Quest: "q2"})
	if err != nil || string(got.Output) != "refused\n" {
		t.Errorf("q2 reading q1's scratch: %q, %v; want refused", got.Output, err)
	}
}

// A run reaches the network only when its Request says so.
func TestConfinedCommandNetwork(t *testing.T) {
	b := newConfinedBox(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	c := mustNewCommand(t, CommandConfig{Confine: b.l, Argv: []string{"bash", "-c", `(echo > /dev/tcp/127.0.0.1/` + port + `) 2>/dev/null && echo reached || echo refused`}})
	for _, network := range []bool{false, true} {
		got, err := c.Run(context.Background(), Request{Dir: b.project, Network: network})
		want := map[bool]string{false: "refused\n", true: "reached\n"}[network]
		if err != nil || string(got.Output) != want {
			t.Errorf("Network %v: %q, %v; want %q", network, got.Output, err, want)
		}
	}
}
