package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/questbox/questbox/internal/buildtest"
	"github.com/questbox/questbox/internal/daemon/daemontest"
	"github.com/questbox/questbox/ui/api"
)

// TestQuestNewCouncil: --preset council makes the owner's turns a council
// of two reviewers and a judge, whose members the demo plays; a council
// in solo mode, an unknown preset and a malformed --council are refused
// with exit 1 and a reason.
func TestQuestNewCouncil(t *testing.T) {
	data := dataDir(t)
	must(t, 0, "", "quest", "new", "ocr", "--direction", "free OCR for invoices", "--preset", "council", "--provider", "demo", "--data", data)
	roles := map[string]int{}
	for range 4 {
		must(t, 0, "", "tick", "--data", data)
		var d api.QuestDetail
		decode(t, must(t, 0, "", "quest", "show", "q1", "--json", "--data", data), &d)
		roles = map[string]int{}
		for _, n := range d.Nodes {
			roles[n.Role]++
		}
	}
	if roles["reviewer"] != 2 || roles["judge"] != 1 {
		t.Errorf("after four ticks: got roles %v, want a council of 2 reviewers and 1 judge", roles)
	}
	must(t, 0, "", "quest", "new", "gated", "--direction", "d", "--provider", "demo", "--preset", "council", "--gates", "scout,poc", "--checkpoint", "scout_gate", "--data", data)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--mode", "solo", "--council", "reviewer:1"}, "mode solo has no owner"},
		{[]string{"--preset", "nope"}, `unknown --preset "nope" (known: council, teams)`},
		{[]string{"--council", "judges:1"}, `"judges" is not reviewer or judge`},
		{[]string{"--council", "judge:1", "--council-provider", "judge=gemini"}, `council provider "gemini" is not configured`},
		{[]string{"--gates", "scout"}, "phase gates (scout) need a council"},
		{[]string{"--council", "judge:1", "--gates", "owner"}, `phase gate "owner" is not a worker role`},
		{[]string{"--council", "judge:1", "--checkpoint", "scout_gate"}, `checkpoint "scout_gate" is not one of the quest's roles`},
	} {
		args := append([]string{"quest", "new", "x", "--direction", "d", "--provider", "demo", "--data", data}, c.args...)
		if r := must(t, 1, "", args...); !strings.Contains(r.stderr, c.want) {
			t.Errorf("questbox %s: stderr %q, want it to contain %q", strings.Join(args, " "), r.stderr, c.want)
		}
	}
}

// TestCrashDuringCouncil kills a real `questbox run` with SIGKILL while
// both members of a council run (at the same time: each is a different
// program and both have started before the kill): after restart the
// members are pending again with an interrupted attempt and no try used,
// the owner still sits in council_pending, and once the members answer
// the council decides, each member having run twice (one run
// interrupted, one recorded); the ledger verifies throughout.
func TestCrashDuringCouncil(t *testing.T) {
	bin := buildtest.Questbox(t)
	dir := daemontest.ShortDir(t)
	data := filepath.Join(dir, "data")
	fast := filepath.Join(dir, "fast")
	// A member waits (in its shell, so that its command line names its
	// script: the test finds it in /proc) until fast exists.
	script := func(name, body string) string {
		path := filepath.Join(dir, name+".sh")
		text := fmt.Sprintf("#!/bin/sh\ncat >/dev/null\nif [ -e %s ]; then printf '%%s\\n' '%s'; exit 0; fi\nsleep 600\n", fast, body)
		if name == "scout" {
			text = fmt.Sprintf("#!/bin/sh\ncat >/dev/null\nprintf '%%s\\n' '%s'\n", body)
		}
		if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cfg := filepath.Join(dir, "questbox.toml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`[daemon]
max_parallel = 3

[providers.scout]
type = "command"
argv = ["sh", %q]
vendor = "local"

[providers.rev]
type = "command"
argv = ["sh", %q]
vendor = "local"

[providers.judge]
type = "command"
argv = ["sh", %q]
vendor = "local"

[council]
reviewers = ["rev"]
judges = ["judge"]
`, script("scout", `{"verdict":"promising","evidence":"the scout found two leads worth weighing","citations":[],"new_directions":["alpha lead","beta lead"]}`),
		script("rev", `{"confidence":0.5,"actions":[],"dissent":"too early","notes":"n"}`),
		script("judge", `{"confidence":1,"actions":[{"action":"finish","summary":"done"}],"dissent":"","verdict_source":"pass","citations":[{"source":"e","quote":"two leads worth"}]}`))), 0o644)
	qbx := binaryCLI(t, bin, cfg, data)
	qbx(0, "quest", "new", "council", "--direction", "weigh two leads", "--provider", "scout", "--roles", "scout,poc,owner", "--council", "reviewer:1,judge:1")

	run := func() *exec.Cmd { return startBinaryDaemon(t, bin, cfg, data, dir) }
	daemon := run()
	var pids []int
	waitFor(t, "both members to run at once", func() bool {
		pids = append(processesNaming(t, filepath.Join(dir, "rev.sh")), processesNaming(t, filepath.Join(dir, "judge.sh"))...)
		return len(pids) == 2 && !slices.Contains(pids, 1)
	})
	t.Cleanup(func() {
		for _, p := range pids {
			syscall.Kill(-p, syscall.SIGKILL)
		}
	})
	if err := daemon.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	daemon.Wait()
	for _, p := range pids {
		syscall.Kill(-p, syscall.SIGKILL)
	}
	waitStoreReleased(t, filepath.Join(data, "questbox.db"))

	show := func() (owner api.Node, ms []api.Node, q api.Quest) {
		var d api.QuestDetail
		if err := json.Unmarshal([]byte(qbx(0, "quest", "show", "q1", "--json")), &d); err != nil {
			t.Fatal(err)
		}
		for _, n := range d.Nodes {
			switch n.Role {
			case "owner":
				owner = n
			case "reviewer", "judge":
				ms = append(ms, n)
			}
		}
		return owner, ms, d.Quest
	}
	qbx(0, "verify")
	// The next writing command (or daemon) puts the members back.
	qbx(0, "quest", "stop", "q1")
	owner, ms, _ := show()
	if owner.Status != api.NodeStatus("council_pending") || len(ms) != 2 {
		t.Fatalf("after kill -9: owner %s with %d members, want council_pending with 2", owner.Status, len(ms))
	}
	for _, m := range ms {
		last := m.Attempts[len(m.Attempts)-1]
		if m.Status != api.NodePending || m.Tries != 0 || last.Outcome != "interrupted" || last.TryUsed {
			t.Errorf("member %s after kill -9: %s, %d tries, last attempt %+v; want pending, no try used, interrupted", m.ID, m.Status, m.Tries, last)
		}
	}
	qbx(0, "verify")

	// The members answer from now on; the council sits again and decides.
	if err := os.WriteFile(fast, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	qbx(0, "quest", "resume", "q1")
	run()
	waitFor(t, "the council to decide", func() bool {
		o, _, _ := show()
		return o.Status == api.NodeExplored
	})
	_, ms, q := show()
	for _, m := range ms {
		if m.Status != api.NodeExplored || len(m.Runs) != 2 {
			t.Errorf("member %s: %s with runs %v, want explored after 2 runs (one interrupted)", m.ID, m.Status, m.Runs)
		}
	}
	if q.Status != api.QuestStatus("done") {
		t.Errorf("quest: %s (%s), want done by the judge's finish", q.Status, q.Reason)
	}
	qbx(0, "verify")
}
