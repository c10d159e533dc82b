package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/findings"
	"github.com/questbox/questbox/gates"
	"github.com/questbox/questbox/gates/consent"
)

// submitAnswer submits raw for node of an external quest.
func (h *harness) submitAnswer(quest, node, raw string) SubmitResult {
	h.t.Helper()
	res, err := h.e.Submit(context.Background(), quest, node, []byte(raw))
	if err != nil {
		h.t.Fatalf("submit %s: %v", node, err)
	}
	return res
}

// A solo quest's findings: a conclusion a person approved at a checkpoint
// (on the dashboard), a conclusion the gate passed, a growing and a dead
// end, each in its group in lock order; an exhausted node and one a person
// aborted are closed without a finding; the quest's ending names its
// reason.
func TestResultOfWorkers(t *testing.T) {
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) {
		s.Provider, s.Mode, s.Limits.MaxTries, s.Limits.MaxStalled = ProviderExternal, ModeSolo, 1, 0
	})
	if _, err := h.e.Scan(q.ID, []string{"alpha", "beta", "gamma", "delta", "eps", "zeta"}); err != nil {
		t.Fatal(err)
	}
	// n1 alpha: a conclusion the gate passes.
	h.submitAnswer(q.ID, "n1", answer("conclusion", "alpha reads every sample invoice without an error."))
	// n2 beta: a dead end; n3 gamma: growing (its direction is n7).
	h.submitAnswer(q.ID, "n2", answer("dead", "beta cannot read vertical text at all, so it is out."))
	h.submitAnswer(q.ID, "n3", answer("promising", "gamma reads most invoices; its tables need a look.", "gamma on tables"))
	// n4 delta: FAILs its one try.
	h.submitAnswer(q.ID, "n4", "no JSON here")
	// n5 eps: a person aborts it.
	if _, err := h.e.AbortNode("n5", "not worth it"); err != nil {
		t.Fatal(err)
	}
	// n6 zeta: a conclusion at a checkpoint, approved on the dashboard.
	if err := h.e.PlantQuest(q.ID, func(q *Quest) { q.Checkpoints = []string{RoleScout} }); err != nil {
		t.Fatal(err)
	}
	if res := h.submitAnswer(q.ID, "n6", answer("conclusion", "zeta reads every invoice and every table.")); res.Outcome != "REVIEW" {
		t.Fatalf("n6 at a checkpoint: %s, want REVIEW", res.Outcome)
	}
	src, err := consent.NewDashboard(true, "alice")
	if err != nil {
		t.Fatal(err)
	}
	c, err := consent.New(src, h.node("n6").Claim.Hash)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.e.Approve("n6", c); err != nil {
		t.Fatal(err)
	}

	r, err := h.e.Result(q.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range r.Findings {
		got = append(got, string(f.Kind)+":"+f.Node.ID+":"+f.Gate)
	}
	if want := "conclusion:n1:PASS conclusion:n6:REVIEW growing:n3:PASS dead_end:n2:PASS"; strings.Join(got, " ") != want {
		t.Errorf("findings %q, want %q", strings.Join(got, " "), want)
	}
	if c := r.Count(FindingConclusion); c != 2 {
		t.Errorf("Count(conclusion) = %d, want 2", c)
	}
	n1, n6 := r.Findings[0], r.Findings[1]
	if n1.Approval != nil || n1.Why != "" || len(n1.Review) != 0 {
		t.Errorf("n1 (PASS): approval %+v, why %q, review %v; want none", n1.Approval, n1.Why, n1.Review)
	}
	if a := n6.Approval; a == nil || a.Node != "n6" || a.Via != "dashboard:alice" || !a.At.Equal(h.clock.Now()) {
		t.Errorf("n6's approval %+v, want dashboard:alice on n6 at %s", a, h.clock.Now())
	}
	if n6.Why != "role scout is a human checkpoint" {
		t.Errorf("n6's why %q", n6.Why)
	}
	if ev := n6.Node.Evidence; ev != "zeta reads every invoice and every table." || len(n6.Node.Citations) != 1 {
		t.Errorf("n6's evidence %q, citations %v", ev, n6.Node.Citations)
	}
	var closed []string
	for _, n := range r.Closed {
		closed = append(closed, n.ID+":"+string(n.Status))
	}
	if want := "n4:exhausted n5:aborted"; strings.Join(closed, " ") != want {
		t.Errorf("closed %q, want %q", strings.Join(closed, " "), want)
	}
	if r.Ending != (Ending{}) || r.Quest.Finished() {
		t.Errorf("an active quest's ending %+v, finished %v", r.Ending, r.Quest.Finished())
	}

	// The quest stopped by a person, then out of budget.
	if _, err := h.e.StopQuest(q.ID, SourceCLI); err != nil {
		t.Fatal(err)
	}
	r, _ = h.e.Result(q.ID)
	if r.Ending.How != EndedByPerson || r.Ending.Reason != domain.StoppedReason(SourceCLI) || r.Quest.Finished() {
		t.Errorf("stopped: ending %+v, finished %v", r.Ending, r.Quest.Finished())
	}
	err = h.e.update(func(t *txn) error {
		q, err := t.Quest(q.ID)
		if err != nil {
			return err
		}
		return t.SetQuestStatus(q, QuestTerminated, "max_agent_runs reached (5 of 5)")
	})
	if err != nil {
		t.Fatal(err)
	}
	r, _ = h.e.Result(q.ID)
	if r.Ending.How != EndedByBudget || !r.Quest.Finished() {
		t.Errorf("terminated: ending %+v, finished %v", r.Ending, r.Quest.Finished())
	}
	if _, err := h.e.Result("q99"); err == nil {
		t.Error("the result of no quest is no error")
	}
}

// FindingOf is the one rule of what a node found: its verdict, and the
// status that verdict locks it in, on a worker's node or a Team.
func TestFindingOf(t *testing.T) {
	for _, c := range []struct {
		name string
		n    Node
		want FindingKind
	}{
		{"conclusion", Node{Role: RoleScout, Status: Explored, Verdict: gates.VerdictConclusion}, FindingConclusion},
		{"growing", Node{Role: RolePOC, Status: Growing, Verdict: gates.VerdictPromising}, FindingGrowing},
		{"dead end", Node{Role: RoleScout, Status: Aborted, Verdict: gates.VerdictDead}, FindingDeadEnd},
		{"a Team's conclusion", Node{Role: RolePOC, TeamKind: RolePOC, Status: Explored, Verdict: gates.VerdictConclusion}, FindingConclusion},
		{"aborted by a person", Node{Role: RoleScout, Status: Aborted}, ""},
		{"aborted after a promising answer", Node{Role: RoleScout, Status: Aborted, Verdict: gates.VerdictPromising}, ""},
		{"exhausted", Node{Role: RoleScout, Status: Exhausted}, ""},
		{"not locked yet", Node{Role: RoleScout, Status: Passed, Verdict: gates.VerdictConclusion}, ""},
		{"an executer's deliverable", Node{Role: RoleExecuter, Stage: StageExec, Team: "n1", Status: Explored, Verdict: gates.VerdictConclusion}, ""},
		{"an owner's turn", Node{Role: RoleOwner, Status: Explored}, ""},
		{"a judge's vote", Node{Role: RoleJudge, Status: Explored, Verdict: "pass"}, ""},
		{"a phase gate", Node{Role: "scout" + domain.GateSuffix, Status: Explored, Verdict: gates.SourcePass}, ""},
	} {
		got, ok := findings.FindingOf(&c.n)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("%s: FindingOf = %q, %v; want %q", c.name, got, ok, c.want)
		}
	}
}

// An owner's finish action keeps its whole summary as the closing
// statement; the quest's reason has its first 200 bytes. A quest that
// finished before owners kept it shows those.
func TestResultKeepsTheOwnersClosingStatement(t *testing.T) {
	long := "The quest found its answer. " + strings.Repeat("Every sample invoice was read twice. ", 20)
	p := funcProvider(func(_ context.Context, req agent.Request) (agent.Reply, error) {
		if req.Role != RoleOwner {
			return reply(answer("conclusion", "alpha reads every sample invoice without an error.")), nil
		}
		return reply("Done.\n```json\n{\"evidence\": \"nothing is left to decide\", \"actions\": [{\"action\": \"finish\", \"summary\": \"" + long + "\"}]}\n```\n"), nil
	})
	h := newHarness(t, Options{Providers: map[string]Provider{"p": p}})
	q := h.quest(func(s *QuestSpec) { s.Provider, s.Mode, s.Roles = "p", ModeTeam, []string{RoleScout, RoleOwner} })
	for i := 0; i < 10 && h.questNow(q.ID).Status == QuestActive; i++ {
		h.tick()
	}
	r, err := h.e.Result(q.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Ending.How != EndedByFinish || r.Ending.Statement != long || r.Ending.Node == "" || h.node(r.Ending.Node).Role != RoleOwner {
		t.Fatalf("ending %+v, want the owner's finish with its whole summary", r.Ending)
	}
	if want := ReasonOwnerFinished + domain.Truncate(long, 200); r.Quest.Reason != want {
		t.Errorf("reason %q, want %q", r.Quest.Reason, want)
	}
	if len(r.Findings) != 1 || r.Findings[0].Kind != FindingConclusion || r.Findings[0].Node.Role != RoleScout {
		t.Errorf("findings %+v, want the scout's conclusion", r.Findings)
	}

	// A quest finished before the summary was kept on the owner: the
	// reason has the start of it.
	old := &Quest{Status: QuestDone, Reason: r.Quest.Reason}
	if d := findings.Of(old, nil).Ending; d.How != EndedByFinish || d.Statement != domain.Truncate(long, 200) || d.Node != "" {
		t.Errorf("an older owner's ending %+v, want the reason's statement", d)
	}
	for reason, how := range map[string]EndingHow{ReasonNoWork: EndedNoWork, ReasonStrategistConcluded + "x": EndedByStrategist, "": EndedDone} {
		if d := findings.Of(&Quest{Status: QuestDone, Reason: reason}, nil).Ending; d.How != how {
			t.Errorf("done for %q: %s, want %s", reason, d.How, how)
		}
	}
	stopped := &Quest{Status: QuestStopped, Reason: "no progress: the same evidence 3 times in a row"}
	if d := findings.Of(stopped, nil).Ending; d.How != EndedForAttention {
		t.Errorf("stopped for no progress: %s, want %s", d.How, EndedForAttention)
	}
}
