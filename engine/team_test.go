package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
)

// teamScripts writes one shell script per stage provider into dir and
// returns the providers: each logs its name to dir/log, keeps a count of
// its runs in dir/NAME.n (so $n is its run number) and prints body.
func teamScripts(t *testing.T, dir string, bodies map[string]string) map[string]Provider {
	t.Helper()
	out := map[string]Provider{}
	for name, body := range bodies {
		script := filepath.Join(dir, name+".sh")
		src := fmt.Sprintf("#!/bin/sh\nD=%q\ncat > \"$D/%s.prompt\"\nn=$(cat \"$D/%s.n\" 2>/dev/null || echo 0)\nn=$((n+1))\necho $n > \"$D/%s.n\"\ncp \"$D/%s.prompt\" \"$D/%s.prompt.$n\"\necho %s >> \"$D/log\"\n%s\n",
			dir, name, name, name, name, name, name, body)
		if err := os.WriteFile(script, []byte(src), 0o755); err != nil {
			t.Fatal(err)
		}
		p, err := agent.NewCommand(agent.CommandConfig{Name: name, Argv: []string{"/bin/sh", script}, Timeout: time.Hour, OutputCap: 1 << 16, Env: []string{"PATH"}})
		if err != nil {
			t.Fatal(err)
		}
		out[name] = p
	}
	return out
}

// heredoc prints s as the script's answer.
func heredoc(s string) string { return "cat <<'ANSWER'\n" + s + "\nANSWER" }

const teamPlan = "1. run both engines on the 40 invoices\n2. count exact matches"

func execAnswer(verdict, evidence string, dirs ...string) string {
	return answer(verdict, evidence, dirs...)
}

func acceptJSON(quote string) string {
	return fmt.Sprintf(`{"decision":"accept","reason":"meets the plan","citations":[{"quote":%q}]}`, quote)
}

func rejectJSON(reason, target string) string {
	return fmt.Sprintf(`{"decision":"reject","reason":%q,"revision_target":%q}`, reason, target)
}

const ownerFinish = `{"evidence":"the Team is blocked; nothing more to try","actions":[{"action":"finish","summary":"stopped after a blocked Team"}]}`

// teamQuest creates a Teams quest whose stages run on the providers of
// their roles (Quest.RoleProviders) and whose owner runs on "owner".
func teamQuest(h *harness, maxRev int, accept string, more ...func(*QuestSpec)) *Quest {
	h.t.Helper()
	q := h.quest(func(s *QuestSpec) {
		s.Provider, s.Teams, s.MaxRevisions, s.AcceptMode = "owner", true, maxRev, accept
		s.TeamAccept = map[string]string{RoleScout: "names the winning engine with its score"}
		for _, f := range more {
			f(s)
		}
	})
	err := h.e.update(func(t *txn) error {
		q, err := t.Quest(q.ID)
		if err != nil {
			return err
		}
		q.RoleProviders = map[string]string{RolePlanner: "planner", RoleExecuter: "executer", RoleAccepter: "accepter"}
		return nil
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return q
}

func readLog(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// max_revisions 2 lets a Team make two revisions: its third rejection
// blocks it (cap exceeded).
func TestTeamRejectedPastItsCapIsBlockedAndTheOwnerIsTold(t *testing.T) {
	dir := t.TempDir()
	provs := teamScripts(t, dir, map[string]string{
		"planner":  heredoc(teamPlan),
		"executer": heredoc(execAnswer("promising", "engine A read 31 of 40 invoices exactly", "try engine A on receipts")),
		"accepter": `if [ $n -eq 1 ]; then echo '` + rejectJSON("no comparison with engine B", "executer") + `'; else echo '` + rejectJSON("still no score for engine B", "planner") + `'; fi`,
		"owner":    heredoc(ownerFinish),
	})
	h := localHarness(t, Options{Providers: provs})
	q := teamQuest(h, 2, "")
	team := "n1"
	if n := h.node(team); n.Status != Revising || n.TeamKind != RoleScout || n.MaxRevisions != 2 {
		t.Fatalf("root: got %s kind %q max %d, want a revising scout Team with max_revisions 2", n.Status, n.TeamKind, n.MaxRevisions)
	}
	for i := 0; i < 7; i++ {
		h.tick()
	}
	if n := h.node(team); n.Status != Revising || n.RevisionCount != 2 {
		t.Fatalf("Team: got %s after %d rejections, want still revising after 2 (its two revisions)", n.Status, n.RevisionCount)
	}
	h.tick() // the third rejection
	n := h.node(team)
	if n.Status != TeamBlocked || n.RevisionCount != 3 || !strings.HasPrefix(n.Reason, "max_revisions 2: cap exceeded, rejected 3 times; last: still no score") {
		t.Fatalf("Team: got %s after %d rejections (%q), want team_blocked by the third, cap exceeded", n.Status, n.RevisionCount, n.Reason)
	}
	if got, want := strings.Join(readLog(t, dir), ","), "planner,executer,accepter,executer,accepter,planner,executer,accepter"; got != want {
		t.Fatalf("stages: got %s, want %s", got, want)
	}
	h.tick() // the owner's turn
	prompt, err := os.ReadFile(filepath.Join(dir, "owner.prompt"))
	if err != nil {
		t.Fatalf("the owner never ran: %v", err)
	}
	if !strings.Contains(string(prompt), "FAIL Team "+team) || !strings.Contains(string(prompt), "team_blocked") || !strings.Contains(string(prompt), "still no score for engine B") {
		t.Fatalf("owner prompt does not report the blocked Team:\n%s", prompt)
	}
	if got := h.questNow(q.ID).Status; got != QuestDone {
		t.Fatalf("quest: got %s, want done by the owner", got)
	}
	// Each stage is its own node under the ratchet, on its own provider.
	stages := 0
	err = h.store.db.View(func(tx *store.Tx) error {
		for i := 2; ; i++ {
			s, err := records.ReadNode(tx, domain.NodeID(uint64(i)))
			if err != nil || s.Team == "" {
				return nil
			}
			stages++
			if !s.Status.Terminal() || len(s.Runs) != 1 {
				return fmt.Errorf("stage %s: %s with %d runs, want locked after one run", s.ID, s.Status, len(s.Runs))
			}
		}
	})
	if err != nil || stages != 8 {
		t.Fatalf("stages: %d, %v; want 8 locked stage nodes", stages, err)
	}
	for i := 2; i <= 9; i++ {
		s := h.node(domain.NodeID(uint64(i)))
		runs, err := h.e.QuestRuns("", s.ID)
		if err != nil || len(runs) != 1 || runs[0].Provider != s.Role {
			t.Errorf("stage %s (%s): runs %+v, %v; want one run on the %s provider", s.ID, s.Role, runs, err, s.Role)
		}
	}
	if _, err := h.e.Verify(); err != nil {
		t.Fatalf("verify: %v", err)
	}
}

func TestTeamLocksOnlyWhenAcceptAndL1Pass(t *testing.T) {
	dir := t.TempDir()
	good := "engine A read 31 of 40 invoices exactly"
	provs := teamScripts(t, dir, map[string]string{
		"planner": heredoc(teamPlan),
		// The first deliverable breaks no contract but fails L1
		// (evidence-length); the second passes.
		"executer": `if [ $n -eq 1 ]; then echo '{"verdict":"promising","evidence":"A wins","citations":[],"new_directions":[]}'; else cat <<'ANSWER'
` + execAnswer("promising", good, "try engine A on receipts") + `
ANSWER
fi`,
		"accepter": `if [ $n -eq 1 ]; then echo '` + acceptJSON("A wins") + `'; else echo '` + acceptJSON("31 of 40") + `'; fi`,
		"owner":    heredoc(ownerFinish),
	})
	h := localHarness(t, Options{Providers: provs})
	q := teamQuest(h, 2, "")
	for i := 0; i < 3; i++ {
		h.tick()
	}
	n := h.node("n1")
	if n.Status != Revising || n.RevisionCount != 1 || !strings.Contains(n.Feedback, "L1 gate") {
		t.Fatalf("after an accept of an L1 FAIL: got %s, revision %d, feedback %q; want revising, revision 1, the L1 facts", n.Status, n.RevisionCount, n.Feedback)
	}
	if ex := h.node("n3"); ex.Stage != StageExec || ex.Outcome != "FAIL" || !ex.Status.Terminal() {
		t.Fatalf("first executer: got %s %s outcome %q, want a locked stage whose deliverable L1 failed", ex.Stage, ex.Status, ex.Outcome)
	}
	h.tick() // the executer again
	h.tick() // the accepter again
	n = h.node("n1")
	if n.Status != Growing || n.Verdict != "promising" || n.Evidence != good {
		t.Fatalf("after an accept of an L1 PASS: got %s verdict %q evidence %q; want growing by the executer's verdict", n.Status, n.Verdict, n.Evidence)
	}
	if got := h.questNow(q.ID).Counts.Get(Proposed); got != 1 {
		t.Fatalf("proposals: got %d, want the executer's new direction", got)
	}
	if got, want := strings.Join(readLog(t, dir), ","), "planner,executer,accepter,executer,accepter"; got != want {
		t.Fatalf("stages: got %s, want %s", got, want)
	}
	p, err := os.ReadFile(filepath.Join(dir, "accepter.prompt.1"))
	if err != nil || !strings.Contains(string(p), "names the winning engine with its score") || !strings.Contains(string(p), "A wins") {
		t.Fatalf("accepter prompt (%v) lacks the accept criteria or the deliverable:\n%s", err, p)
	}
}

// TestDemoTeamsQuest: the demo plays planner, executer and accepter; each
// Team is rejected once, revised, and then locks by the executer's verdict.
// Exactly one accept (of the revised "reproduce it in a small experiment"
// Team, whose uncited conclusion the L1 gate sends to REVIEW) waits for the
// button; the test presses it when it shows.
func TestDemoTeamsQuest(t *testing.T) {
	h := newHarness(t, Options{Providers: map[string]Provider{"demo": agent.Demo{}}})
	q := h.quest(func(s *QuestSpec) {
		s.Provider, s.Teams = "demo", true
		s.Direction = "find the most accurate free OCR for Japanese invoices"
	})
	for i := 0; i < 6; i++ { // plan, exec, accept (reject), exec, accept
		h.tick()
	}
	root := h.node("n1")
	if root.Status != Growing || root.RevisionCount != 1 || root.Verdict != "promising" {
		ns, _ := h.e.Nodes(q.ID)
		t.Fatalf("demo Team: got %s after %d revisions, verdict %q; want growing after 1\n%s", root.Status, root.RevisionCount, root.Verdict, describeNodes(ns))
	}
	consents := 0
	for i := 0; i < 60 && h.questNow(q.ID).Status == QuestActive; i++ {
		h.tick()
		cs, err := h.e.Consents()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			consents++
			if n := h.node(c.Node); n.Stage != StageAccept || !strings.HasPrefix(h.node(n.Team).Hypothesis, "reproduce it in a small experiment: ") {
				t.Errorf("consent on %s (%s of Team %s), want only the accept of the experiment Team", n.ID, n.Stage, n.Team)
			}
			if err := h.e.Approve(c.Node, button(t, c.ClaimHash)); err != nil {
				t.Fatal(err)
			}
		}
	}
	qq := h.questNow(q.ID)
	if qq.Status != QuestDone {
		ns, _ := h.e.Nodes(q.ID)
		t.Fatalf("demo Teams quest did not finish: %s %q\n%s", qq.Status, qq.Reason, describeNodes(ns))
	}
	if consents != 1 {
		t.Errorf("demo Teams quest asked for %d consents, want exactly 1", consents)
	}
	if qq.Counts.Get(TeamBlocked) != 0 || qq.Counts.Get(Exhausted) != 0 {
		t.Errorf("demo Teams quest: got counts %v, want no blocked Team and no exhausted stage", qq.Counts)
	}
}

func TestTeamRejectedTwiceForTheSameReasonStalls(t *testing.T) {
	dir := t.TempDir()
	provs := teamScripts(t, dir, map[string]string{
		"planner":  heredoc(teamPlan),
		"executer": heredoc(execAnswer("promising", "engine A read 31 of 40 invoices exactly")),
		"accepter": `echo '` + rejectJSON("no comparison with engine B", "executer") + `'`,
		"owner":    heredoc(ownerFinish),
	})
	h := localHarness(t, Options{Providers: provs})
	q := teamQuest(h, 5, "", func(s *QuestSpec) { s.Limits.MaxStalled = 1 })
	for i := 0; i < 3; i++ {
		h.tick()
	}
	if qq := h.questNow(q.ID); qq.Status != QuestActive {
		t.Fatalf("after one rejection: got %s %q, want active", qq.Status, qq.Reason)
	}
	h.tick()
	h.tick()
	qq := h.questNow(q.ID)
	if qq.Status != QuestStopped || !strings.Contains(qq.Reason, "rejected again for the same reason") {
		t.Fatalf("after the same rejection twice: got %s %q, want stopped for no progress", qq.Status, qq.Reason)
	}
	if n := h.node("n1"); n.Status != Revising || n.RevisionCount != 2 {
		t.Fatalf("Team: got %s after %d revisions, want still revising after 2", n.Status, n.RevisionCount)
	}
}

func TestTeamHumanAcceptIsAButtonConsent(t *testing.T) {
	dir := t.TempDir()
	good := "engine A read 31 of 40 invoices exactly"
	provs := teamScripts(t, dir, map[string]string{
		"planner":  heredoc(teamPlan),
		"executer": heredoc(execAnswer("conclusion", good)),
		"accepter": `echo '` + acceptJSON("31 of 40") + `'`,
		"owner":    heredoc(ownerFinish),
	})
	h := localHarness(t, Options{Providers: provs})
	teamQuest(h, 2, AcceptHuman)
	for i := 0; i < 3; i++ {
		h.tick()
	}
	acc := h.node("n4")
	if acc.Stage != StageAccept || acc.Status != AwaitingConsent || acc.Claim == nil {
		t.Fatalf("accepter: got %s %s, want the accept awaiting consent", acc.Stage, acc.Status)
	}
	if n := h.node("n1"); n.Status != Revising {
		t.Fatalf("Team before consent: got %s, want revising (an accept locks nothing by itself)", n.Status)
	}
	if err := h.e.Approve(acc.ID, button(t, acc.Claim.Hash)); err != nil {
		t.Fatal(err)
	}
	if n := h.node("n1"); n.Status != Explored || n.Verdict != "conclusion" || n.Evidence != good {
		t.Fatalf("Team after consent: got %s verdict %q, want explored by the executer's conclusion", n.Status, n.Verdict)
	}

	// A person who rejects the accept rejects the Team: its executer
	// revises, and the accepter is not asked again.
	q2 := teamQuest(h, 2, AcceptHuman)
	for i := 0; i < 3; i++ {
		h.tick()
	}
	ns, _ := h.e.Nodes(q2.ID)
	acc = ns[len(ns)-1]
	if acc.Stage != StageAccept || acc.Status != AwaitingConsent {
		t.Fatalf("second accepter: got %s %s, want awaiting consent", acc.Stage, acc.Status)
	}
	if err := h.e.Reject(acc.ID, button(t, acc.Claim.Hash)); err != nil {
		t.Fatal(err)
	}
	team := h.node(ns[0].ID)
	if team.Status != Revising || team.RevisionCount != 1 || !strings.Contains(team.Feedback, "rejected by a human") {
		t.Fatalf("Team after a human rejection: got %s, revision %d, feedback %q; want revising, revision 1", team.Status, team.RevisionCount, team.Feedback)
	}
	if a := h.node(acc.ID); !a.Status.Terminal() {
		t.Fatalf("rejected accepter: got %s, want its stage locked", a.Status)
	}
	ns, _ = h.e.Nodes(q2.ID)
	if last := ns[len(ns)-1]; last.Stage != StageExec || last.Status != Pending || last.RevisionCount != 1 {
		t.Fatalf("after a human rejection: got %s %s revision %d last, want a pending executer of revision 1", last.Stage, last.Status, last.RevisionCount)
	}
}

func TestAbortingATeamOrItsStage(t *testing.T) {
	dir := t.TempDir()
	provs := teamScripts(t, dir, map[string]string{
		"planner":  heredoc(teamPlan),
		"executer": heredoc(execAnswer("promising", "engine A read 31 of 40 invoices exactly")),
		"accepter": `echo '` + acceptJSON("31 of 40") + `'`,
		"owner":    heredoc(ownerFinish),
	})
	h := localHarness(t, Options{Providers: provs})
	teamQuest(h, 2, "")
	h.tick() // the planner; the executer n3 waits
	if _, err := h.e.AbortNode("n1", "not worth it"); err != nil {
		t.Fatal(err)
	}
	if n := h.node("n3"); n.Status != Aborted {
		t.Fatalf("the aborted Team's waiting executer: got %s, want aborted with it", n.Status)
	}
	q2 := teamQuest(h, 2, "")
	var planner string
	ns, _ := h.e.Nodes(q2.ID)
	for _, n := range ns {
		if n.Stage == StagePlan {
			planner = n.ID
		}
	}
	if _, err := h.e.AbortNode(planner, "wrong plan"); err != nil {
		t.Fatal(err)
	}
	team := ns[0]
	if n := h.node(team.ID); n.Status != TeamBlocked || !strings.Contains(n.Reason, "was aborted") {
		t.Fatalf("a Team whose stage was aborted: got %s %q, want team_blocked saying why", n.Status, n.Reason)
	}
	if got := h.questNow(q2.ID).Queued[RoleOwner]; got == "" {
		t.Fatalf("no owner turn queued after the Team was blocked")
	}
	if !records.EdgeRelation(EdgeStagesInto) || !records.EdgeRelation(EdgeRejectsTo) || !records.EdgeRelation(EdgeAcceptsTo) {
		t.Errorf("salvage does not know the Team relations")
	}
}

// TestTeamWithAnExternalAgent: in a Teams quest an external agent seeds
// Teams with Scan and answers each stage through Next and Submit.
func TestTeamWithAnExternalAgent(t *testing.T) {
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) { s.Provider, s.Teams = ProviderExternal, true })
	res, err := h.e.Scan(q.ID, []string{"tesseract jpn"})
	if err != nil || len(res.Added) != 1 {
		t.Fatalf("scan: %+v, %v", res, err)
	}
	team := res.Added[0]
	answers := []string{
		teamPlan,
		execAnswer("promising", "engine A read 31 of 40 invoices exactly", "try engine A on receipts"),
		acceptJSON("31 of 40"),
	}
	for i, a := range answers {
		w, err := h.e.Next(q.ID)
		if err != nil || w == nil {
			t.Fatalf("stage %d: next: %+v, %v", i, w, err)
		}
		if want := []string{RolePlanner, RoleExecuter, RoleAccepter}[i]; w.Role != want || !strings.Contains(w.Prompt, "You are the "+want+" of Team "+team) {
			t.Fatalf("stage %d: got role %s, want %s, its contract in the prompt:\n%s", i, w.Role, want, w.Prompt)
		}
		r, err := h.e.Submit(context.Background(), q.ID, w.Node, []byte(a))
		if err != nil || r.Outcome != "PASS" {
			t.Fatalf("stage %d: submit: %+v, %v", i, r, err)
		}
	}
	if n := h.node(team); n.Status != Growing || n.Verdict != "promising" {
		t.Fatalf("Team: got %s verdict %q, want growing", n.Status, n.Verdict)
	}
}

// max_revisions N lets a Team make N revisions; the N+1th rejection
// blocks it, saying its cap was exceeded.
func TestMaxRevisionsAllowsThatManyRevisions(t *testing.T) {
	for _, n := range []int{1, 2, 3} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			a := &budgetAgent{tokens: 10} // its accepter rejects every deliverable
			h, q := budgetHarness(t, a, Options{}, func(s *QuestSpec) { s.Teams, s.MaxRevisions, s.Limits.MaxStalled = true, n, 0 })
			stages := 1 + 2*(n+1) // the plan, then a deliverable and its rejection per revision and one more
			for range stages - 1 {
				h.tick()
			}
			if team := h.node("n1"); team.Status != Revising || team.RevisionCount != n {
				t.Fatalf("after %d rejections: Team %s (%d counted), want still revising", n, team.Status, team.RevisionCount)
			}
			h.tick()
			team := h.node("n1")
			want := fmt.Sprintf("max_revisions %d: cap exceeded, rejected %d times; last: no comparison with engine B", n, n+1)
			if team.Status != TeamBlocked || team.Reason != want || a.byRole[RoleAccepter] != n+1 {
				t.Fatalf("after %d rejections: Team %s %q, want team_blocked: %q", a.byRole[RoleAccepter], team.Status, team.Reason, want)
			}
			if qq := h.questNow(q.ID); qq.Status != QuestActive {
				t.Fatalf("quest %s %q, want active: its owner decides next", qq.Status, qq.Reason)
			}
		})
	}
}
