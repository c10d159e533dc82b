package engine

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/verdict"
)

// The same fired rules with the same facts stop a quest, though every
// answer's bytes differ (the answer signal alone never fires).
func TestNoProgressSameFacts(t *testing.T) {
	var n atomic.Int64
	p := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		// The fact quotes how the answer starts: only its end differs.
		return reply(strings.Repeat("I cannot do this. ", 20) + fmt.Sprintf("(attempt %d)", n.Add(1))), nil
	})
	h := newHarness(t, Options{Providers: map[string]Provider{"p": p}})
	q := h.quest(func(s *QuestSpec) { s.Provider = "p"; s.Limits.MaxStalled = 3; s.Limits.MaxTries = 10 })
	h.tick()
	h.tick()
	if got := h.questNow(q.ID); got.Status != QuestActive {
		t.Fatalf("after two answers: got %s %q, want active", got.Status, got.Reason)
	}
	h.tick()
	qq := h.questNow(q.ID)
	if qq.Status != QuestStopped || !strings.Contains(qq.Reason, "no progress: the same rules fired with the same facts 3 times") {
		t.Fatalf("got %s %q, want stopped for no progress (same facts)", qq.Status, qq.Reason)
	}
}

// Evidence unchanged after normalisation stops a quest, though each answer
// passes with new directions and its bytes differ; evidence that changes
// does not.
func TestNoProgressSameEvidence(t *testing.T) {
	for _, tc := range []struct {
		name     string
		evidence func(i int64) string
		stopped  bool
	}{
		{"same after normalisation", func(i int64) string {
			return [...]string{"The Same  evidence, every time.", "the same evidence, EVERY time.", "THE SAME EVIDENCE,   every time."}[i%3]
		}, true},
		{"different", func(i int64) string { return fmt.Sprintf("evidence number %d, found anew", i) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var n atomic.Int64
			p := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
				i := n.Add(1)
				return reply(answer("promising", tc.evidence(i), fmt.Sprintf("a fresh direction number %d", i))), nil
			})
			h := newHarness(t, Options{Providers: map[string]Provider{"p": p}})
			q := h.quest(func(s *QuestSpec) { s.Provider = "p"; s.Mode = ModeSolo; s.Limits.MaxStalled = 3 })
			// The root is a scout, its children poc: the signal is per
			// role, so the three poc answers after the scout's count.
			for range 4 {
				h.tick()
			}
			qq := h.questNow(q.ID)
			if n.Load() != 4 {
				t.Fatalf("%d runs, want 4", n.Load())
			}
			stopped := qq.Status == QuestStopped && strings.Contains(qq.Reason, "no progress: the same evidence 3 times")
			if stopped != tc.stopped {
				t.Fatalf("got %s %q, want stopped for the same evidence: %v", qq.Status, qq.Reason, tc.stopped)
			}
		})
	}
}

// stallSignal counts each signal on its own: the same observation
// max_stalled times in a row stops the quest (the Team pipeline's third
// signal), a different one starts again, and resume forgets the counts.
func TestStallSignal(t *testing.T) {
	h := newHarness(t, Options{Providers: map[string]Provider{}})
	q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal; s.Limits.MaxStalled = 2 })
	observe := func(extra string) *Quest {
		t.Helper()
		var out Quest
		err := h.e.update(func(t *txn) error {
			qq, err := t.Quest(q.ID)
			if err != nil {
				return err
			}
			err = verdict.StallSignal(t, qq, StallTeamReject, extra, "a Team rejected for the same reason")
			out = *qq
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return &out
	}
	observe("n4\x00missing the benchmark")
	if got := observe("n4\x00missing the tests"); got.Status != QuestActive {
		t.Fatalf("two different reasons: got %s %q, want active", got.Status, got.Reason)
	}
	got := observe("n4\x00missing the tests")
	if got.Status != QuestStopped || !strings.Contains(got.Reason, "no progress: a Team rejected for the same reason 2 times in a row") {
		t.Fatalf("the same reason twice: got %s %q, want stopped", got.Status, got.Reason)
	}
	if got := h.questNow(q.ID); got.StallCounts[StallTeamReject] != 2 {
		t.Errorf("stored count %v, want 2", got.StallCounts)
	}
	if _, err := h.e.ResumeQuest(q.ID, SourceCLI); err != nil {
		t.Fatal(err)
	}
	if got := observe("n4\x00missing the tests"); got.Status != QuestActive || got.StallCounts[StallTeamReject] != 1 {
		t.Fatalf("after resume: got %s %v, want active, count 1", got.Status, got.StallCounts)
	}
}
