package engine

import (
	"context"
	"testing"
)

// ActivityCounts counts as Activity does, without keeping the quests:
// the quests that need the owner (terminated; stopped, but not by a
// person), and the agents running, read from the running entries laid
// over the quest records.
func TestActivityCountsAsActivity(t *testing.T) {
	release := make(chan struct{})
	p := heldFailing(release)
	h := newHarness(t, Options{Providers: map[string]Provider{"p": p}, MaxParallel: 10})
	defer func() { close(release); h.e.Wait() }()
	for range 2 {
		h.quest(func(s *QuestSpec) { s.Provider = "p"; s.Limits.MaxAgentRuns = 0 }) // terminated at the tick
	}
	stopped := h.quest(func(s *QuestSpec) { s.Provider = "p" })
	if _, err := h.e.StopQuest(stopped.ID, SourceCLI); err != nil {
		t.Fatal(err)
	}
	h.bulk(3, 0, func(s *QuestSpec) { s.Provider = "p"; s.Mode = ModeSolo }) // running at the tick
	if rep, err := h.e.Tick(context.Background()); err != nil || len(rep.Dispatched) != 3 {
		t.Fatalf("tick: dispatched %v, %v; want 3", rep.Dispatched, err)
	}
	now := h.e.Now()
	full, err := h.e.Activity(now)
	if err != nil {
		t.Fatal(err)
	}
	counts, err := h.e.ActivityCounts(now)
	if err != nil {
		t.Fatal(err)
	}
	if len(full.Quests) != 6 || counts.Quests != nil {
		t.Errorf("Activity read %d quests, ActivityCounts kept %d; want 6 and none", len(full.Quests), len(counts.Quests))
	}
	for _, a := range []struct {
		name string
		a    Activity
	}{{"Activity", full}, {"ActivityCounts", counts}} {
		if a.a.NeedAttention != 2 || a.a.TeamsBlocked != 0 || a.a.AgentsRunning != 3 || len(a.a.Consents) != 0 || a.a.Expired != 0 {
			t.Errorf("%s: need attention %d, teams blocked %d, agents running %d, consents %d, expired %d; want 2, 0, 3, 0, 0",
				a.name, a.a.NeedAttention, a.a.TeamsBlocked, a.a.AgentsRunning, len(a.a.Consents), a.a.Expired)
		}
	}
}
