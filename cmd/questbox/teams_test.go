package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/questbox/questbox/internal/buildtest"
	"github.com/questbox/questbox/internal/daemon/daemontest"
	"github.com/questbox/questbox/ui/api"
)

// TestQuestNewTeams: --teams and --preset teams open the root as a Team
// with its planner queued; --teams is refused in solo mode, and the Team
// flags without --teams are a usage error.
func TestQuestNewTeams(t *testing.T) {
	data := dataDir(t)
	r := must(t, 1, "", "quest", "new", "solo", "--direction", "d", "--mode", "solo", "--teams", "--data", data)
	if !strings.Contains(r.stderr, "--teams needs mode team") {
		t.Errorf("solo --teams: got %q, want it refused naming the mode", r.stderr)
	}
	r = must(t, 1, "", "quest", "new", "x", "--direction", "d", "--max-revisions", "3", "--data", data)
	if !strings.Contains(r.stderr, "need --teams") {
		t.Errorf("--max-revisions alone: got %q, want a usage error", r.stderr)
	}
	must(t, 1, "", "quest", "new", "x", "--direction", "d", "--teams", "--accept-mode", "vote", "--data", data)
	for _, args := range [][]string{
		{"--preset", "teams"},
		{"--teams", "--max-revisions", "3", "--accept-mode", "human"},
	} {
		var q api.Quest
		decode(t, must(t, 0, "", append([]string{"quest", "new", "ocr", "--direction", "free OCR", "--json", "--data", data}, args...)...), &q)
		var d api.QuestDetail
		decode(t, must(t, 0, "", "quest", "show", q.ID, "--json", "--data", data), &d)
		if len(d.Nodes) != 2 || d.Nodes[0].Status != "revising" || d.Nodes[1].Role != "planner" || d.Nodes[1].Status != "pending" {
			t.Fatalf("%v: got nodes %+v, want the root Team revising and its planner pending", args, d.Nodes)
		}
		if len(d.Edges) != 1 || d.Edges[0].Relation != "stages_into" {
			t.Fatalf("%v: got edges %+v, want the Team stages_into its planner", args, d.Edges)
		}
	}
}

// TestTeamKill9BetweenStages: the daemon is killed with SIGKILL while a
// Team's accepter runs, after its planner and executer locked. After the
// restart no stage is lost or run twice unrecorded: the accepter runs
// again (its interrupted attempt recorded, no try used), the planner and
// the executer do not, the Team locks, and the ledger verifies.
func TestTeamKill9BetweenStages(t *testing.T) {
	bin := buildtest.Questbox(t)
	dir := daemontest.ShortDir(t)
	data := filepath.Join(dir, "data")
	agent := filepath.Join(dir, "agent.sh")
	out := agentOut(t)
	log := filepath.Join(out, "log")
	started := filepath.Join(out, "started")
	script := `#!/bin/sh
p=$(cat)
case "$p" in
"You are the planner of"*) echo planner >> ` + log + `; echo "1. read the 40 invoices with engine A"; echo "2. count exact matches" ;;
"You are the executer of"*) echo executer >> ` + log + `
cat <<'ANSWER'
` + answer("promising", "engine A read 31 of 40 invoices exactly") + `
ANSWER
;;
"You are the accepter of"*) echo accepter >> ` + log + `
if [ ! -e ` + started + ` ]; then : > ` + started + `; sleep 600; exit 0; fi
echo '{"decision":"accept","reason":"counts the matches as planned","citations":[{"quote":"31 of 40"}]}' ;;
*) echo '{"evidence":"the Team settled it","actions":[{"action":"finish","summary":"engine A"}]}' ;;
esac
`
	if err := os.WriteFile(agent, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "questbox.toml")
	os.WriteFile(cfg, []byte("[network]\nprobe = \"\"\n[daemon]\nlisten = \"127.0.0.1:0\"\n[providers.stages]\ntype = \"command\"\nwrite = [\""+out+"\"]\nargv = [\"/bin/sh\", \""+agent+"\"]\n"), 0o644)
	qbx := binaryCLI(t, bin, cfg, data)
	qbx(0, "quest", "new", "ocr", "--direction", "free OCR for invoices", "--provider", "stages", "--preset", "teams")

	start := func() *exec.Cmd { return startBinaryDaemon(t, bin, cfg, data, dir) }
	daemon := start()
	pid := waitForPID(t, "the accepter to start", started, agent)
	t.Cleanup(func() { syscall.Kill(-pid, syscall.SIGKILL) })
	if err := daemon.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	daemon.Wait()
	syscall.Kill(-pid, syscall.SIGKILL)

	daemon = start()
	var show api.QuestDetail
	waitFor(t, "the Team to lock", func() bool {
		// Until the restarted daemon's socket answers, the CLI finds the
		// store locked (exit 2): ask again.
		out, err := exec.Command(bin, "quest", "show", "q1", "--json", "--config", cfg, "--data", data).Output()
		var d api.QuestDetail
		if err != nil || json.Unmarshal(out, &d) != nil || len(d.Nodes) == 0 {
			return false
		}
		show = d
		return d.Nodes[0].Status == api.NodeGrowing
	})
	daemon.Process.Signal(syscall.SIGTERM)
	daemon.Wait()

	b, _ := os.ReadFile(log)
	if got, want := strings.Join(strings.Fields(string(b)), ","), "planner,executer,accepter,accepter"; got != want {
		t.Errorf("stage runs: got %s, want %s (only the interrupted accepter again)", got, want)
	}
	var acc *api.Node
	for i := range show.Nodes {
		if show.Nodes[i].Role == "accepter" {
			if acc != nil {
				t.Fatalf("two accepters: %+v", show.Nodes)
			}
			acc = &show.Nodes[i]
		}
	}
	if acc == nil || acc.Tries != 0 || len(acc.Attempts) < 2 || acc.Attempts[0].Outcome != "interrupted" || acc.Attempts[0].TryUsed {
		t.Fatalf("accepter: got %+v, want its interrupted attempt recorded with no try used, then its answer", acc)
	}
	qbx(0, "verify")
}
