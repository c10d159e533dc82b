package api

import (
	"testing"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/gates"
)

// TestVocabularyAgreesWithTheEngine: every status, outcome and event kind
// the engine has is a word of this package, spelled the same.
func TestVocabularyAgreesWithTheEngine(t *testing.T) {
	if len(NodeStatuses) != len(engine.Statuses) {
		t.Fatalf("got %d node statuses, want the engine's %d", len(NodeStatuses), len(engine.Statuses))
	}
	for i, s := range engine.Statuses {
		if string(NodeStatuses[i]) != string(s) {
			t.Errorf("node status %d: got %q, want %q", i, NodeStatuses[i], s)
		}
	}
	for _, tc := range []struct{ got, want string }{
		{string(QuestActive), string(engine.QuestActive)},
		{string(QuestStopped), string(engine.QuestStopped)},
		{string(QuestDone), string(engine.QuestDone)},
		{string(QuestTerminated), string(engine.QuestTerminated)},
		{string(KindNode), engine.KindNode},
		{string(KindVerdict), engine.KindVerdict},
		{string(KindConsent), engine.KindConsent},
		{string(KindQuest), engine.KindQuest},
		{string(KindDevice), engine.KindDevice},
		{string(OutcomePass), gates.OutcomePass.String()},
		{string(OutcomeFail), gates.OutcomeFail.String()},
		{string(OutcomeReview), gates.OutcomeReview.String()},
		{ProviderExternal, engine.ProviderExternal},
		{string(RelSpawned), engine.EdgeSpawned},
		{string(RelGrewTo), engine.EdgeGrewTo},
		{string(RelAbortedTo), engine.EdgeAbortedTo},
		{string(RelProposedFrom), engine.EdgeProposedFrom},
		{string(RelPromoted), engine.EdgePromoted},
		{string(RelCouncilOf), engine.EdgeCouncilOf},
		{string(RelCouncilReply), engine.EdgeCouncilReply},
		{string(RelStagesInto), engine.EdgeStagesInto},
		{string(RelMakesPlan), engine.EdgeMakesPlan},
		{string(RelExecutes), engine.EdgeExecutes},
		{string(RelRejectsTo), engine.EdgeRejectsTo},
		{string(RelAcceptsTo), engine.EdgeAcceptsTo},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
	n := NodeView(&engine.Node{ID: "n1", Status: engine.Deferred, Outcome: "DEFERRED"})
	if n.Status != NodeDeferred || n.Outcome != OutcomeDeferred {
		t.Errorf("got status %q outcome %q, want %q %q", n.Status, n.Outcome, NodeDeferred, OutcomeDeferred)
	}
}
