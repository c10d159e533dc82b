package engine_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/findings"
	"github.com/questbox/questbox/engine/planttest"
	"github.com/questbox/questbox/internal/clock/clocktest"
)

// TestResultOfTheDemoQuest runs the demo quest to its end (the button held
// for its one consent) and reads what it found: its conclusions with their
// evidence and citations, which Team's executer delivered each and which
// accepter accepted it, the gate's word on each (the one that cites
// nothing was a REVIEW, approved on the button), the Teams it kept
// growing, the proposal its owner aborted (closed without a finding), and
// the owner's closing statement. Every node the rule calls a finding is
// in the result, and nothing else is.
func TestResultOfTheDemoQuest(t *testing.T) {
	s, err := engine.OpenStore(t.TempDir(), engine.StoreOptions{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(s, engine.Options{Clock: clocktest.NewClock(at), Providers: map[string]engine.Provider{engine.ProviderDemo: agent.Demo{}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		e.Shutdown(0)
		if _, err := e.Verify(); err != nil {
			t.Errorf("verify: %v", err)
		}
		s.Close()
	})
	q, err := planttest.Demo(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Result(q)
	if err != nil {
		t.Fatal(err)
	}
	if r.Quest.Status != engine.QuestDone || r.Ending.How != engine.EndedByFinish {
		t.Fatalf("the demo quest ended %s (%+v), want done by its owner's finish", r.Quest.Status, r.Ending)
	}
	if !strings.HasPrefix(r.Ending.Statement, agent.DemoLabel+"The demo quest on") || !strings.HasSuffix(r.Ending.Statement, "reached a conclusion.") {
		t.Errorf("closing statement %q", r.Ending.Statement)
	}

	var approved, cited *engine.Finding
	for i := range r.Findings {
		f := &r.Findings[i]
		if f.Kind != engine.FindingConclusion {
			continue
		}
		if f.Node.TeamKind == "" || f.Executer == nil || f.Accepter == nil || f.Accepter.Parent != f.Executer.ID || f.Executer.Team != f.Node.ID {
			t.Errorf("conclusion %s: Team %q, executer %v, accepter %v; want the Team's stages", f.Node.ID, f.Node.TeamKind, f.Executer, f.Accepter)
			continue
		}
		if f.Node.Evidence != f.Executer.Evidence || !slices.Equal(f.Node.Citations, f.Executer.Citations) {
			t.Errorf("conclusion %s: its evidence is not its executer's deliverable", f.Node.ID)
		}
		switch {
		case f.Approval != nil:
			approved = f
		case len(f.Node.Citations) > 0:
			cited = f
		}
	}
	if approved == nil || cited == nil {
		t.Fatalf("the demo's conclusions %+v: want one approved on the button and one with a citation", r.Findings)
	}
	if a := approved.Approval; a.Via != "button" || a.Node != approved.Accepter.ID || approved.Gate != "REVIEW" ||
		len(approved.Review) != 1 || approved.Review[0].Rule != "citations-present" {
		t.Errorf("the approved conclusion %s: approval %+v, gate %s, review %v; want the button on its accepter after citations-present",
			approved.Node.ID, a, approved.Gate, approved.Review)
	}
	if c := cited.Node.Citations[0]; c.Source != agent.DemoCitationSource || c.Quote == "" || cited.Gate != "PASS" {
		t.Errorf("the cited conclusion %s: citation %+v, gate %s", cited.Node.ID, c, cited.Gate)
	}
	if r.Count(engine.FindingGrowing) == 0 || len(r.Closed) == 0 {
		t.Errorf("the demo keeps %d growing and closes %d without a finding; want some of each", r.Count(engine.FindingGrowing), len(r.Closed))
	}
	for _, n := range r.Closed {
		if n.Status != engine.Aborted || !strings.Contains(n.Reason, "aborted by owner") {
			t.Errorf("closed %s: %s (%s), want aborted by the owner", n.ID, n.Status, n.Reason)
		}
	}

	// The rule and the result agree over every node.
	nodes, err := e.Nodes(q)
	if err != nil {
		t.Fatal(err)
	}
	var want, got []string
	for _, n := range nodes {
		if k, ok := findings.FindingOf(n); ok {
			want = append(want, string(k)+":"+n.ID)
		}
	}
	for _, f := range r.Findings {
		got = append(got, string(f.Kind)+":"+f.Node.ID)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("findings %v, want %v", got, want)
	}
}
