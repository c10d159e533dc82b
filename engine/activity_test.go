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

// ActivityCounts reads the quests the tickmem.QuestCache holds as stored from the
// cache, without decoding them: a busy cycle's LEDs read a thousand quests
// on every burst. What is left per quest is its running entry's (its
// role, provider and node named: ~4 allocations); a decode is 4 more,
// its maps and strings among them.
func TestActivityCountsReadsCachedQuestsWithoutDecoding(t *testing.T) {
	const quests = 40
	release := make(chan struct{})
	h := newHarness(t, Options{Providers: map[string]Provider{"p": heldFailing(release)}, MaxParallel: quests})
	defer func() { close(release); h.e.Wait() }()
	h.bulk(quests, 2, func(s *QuestSpec) { s.Provider, s.Mode = "p", ModeSolo })
	// The tick's read teaches the cache the quests; each has a node running.
	if rep, err := h.e.Tick(context.Background()); err != nil || len(rep.Dispatched) != quests {
		t.Fatalf("tick: dispatched %v, %v; want %d", rep.Dispatched, err, quests)
	}
	if n := checkQuestCache(t, h.e); n != quests {
		t.Fatalf("the cache holds %d quests, want %d", n, quests)
	}
	now := h.e.Now()
	want, err := h.e.Activity(now)
	if err != nil {
		t.Fatal(err)
	}
	var got Activity
	allocs := testing.AllocsPerRun(5, func() {
		if got, err = h.e.ActivityCounts(now); err != nil {
			t.Fatal(err)
		}
	})
	if got.AgentsRunning != want.AgentsRunning || got.NeedAttention != want.NeedAttention || got.TeamsBlocked != want.TeamsBlocked {
		t.Errorf("ActivityCounts: running %d, need attention %d, teams blocked %d; Activity: %d, %d, %d",
			got.AgentsRunning, got.NeedAttention, got.TeamsBlocked, want.AgentsRunning, want.NeedAttention, want.TeamsBlocked)
	}
	if want.AgentsRunning != quests {
		t.Errorf("%d agents running, want %d", want.AgentsRunning, quests)
	}
	if allocs >= 5*quests {
		t.Errorf("ActivityCounts allocated %.0f times over %d cached quests: it decodes them", allocs, quests)
	}
}
