package mqtt

import (
	"encoding/json"
	"testing"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/engine/planttest"
	"github.com/questbox/questbox/ui/api"
	"github.com/questbox/questbox/ui/mqtt/mosquittotest"
)

// TestQuestStateCarriesTheLevel: a quest that grows a council and Teams
// while the client runs is republished, retained, with its level, its
// council and its Teams' statuses; the summary still counts it.
func TestQuestStateCarriesTheLevel(t *testing.T) {
	r := newRig(t, mosquittotest.Options{})
	s := r.eng.NewQuestSpec("ocr", "free OCR for Japanese invoices")
	s.Provider = engine.ProviderExternal
	q, err := r.eng.NewQuest(s)
	if err != nil {
		t.Fatal(err)
	}
	sub := r.broker.Subscribe(t, base+"/#")
	r.start(nil)
	topic := base + "/quest/" + q.ID + "/state"
	sub.WaitFor("the v2 quest's state", func(msgs []mosquittotest.Message) bool {
		_, ok := mosquittotest.Last(msgs, topic)
		return ok
	})
	if _, err := planttest.V32(r.eng, q.ID); err != nil {
		t.Fatal(err)
	}
	var v api.Quest
	sub.WaitFor("the quest's state with its Teams", func(msgs []mosquittotest.Message) bool {
		m, ok := mosquittotest.Last(msgs, topic)
		return ok && json.Unmarshal([]byte(m.Payload), &v) == nil && v.Counts["team_blocked"] == 1 && v.Counts["revising"] == 1
	})
	if v.Level != engine.LevelTeams || v.Council == nil || len(v.Council.Judges) != 2 || !v.Teams || v.MaxRevisions != 2 {
		t.Errorf("state: level %q, council %+v, teams %v, max revisions %d; want v3.2 teams, 2 judges, Teams, 2",
			v.Level, v.Council, v.Teams, v.MaxRevisions)
	}
	// A late subscriber gets it retained.
	late := r.broker.Subscribe(t, topic)
	msgs := late.WaitFor("the retained state", func(msgs []mosquittotest.Message) bool { return len(msgs) > 0 })
	var lv api.Quest
	if err := json.Unmarshal([]byte(msgs[0].Payload), &lv); err != nil || !msgs[0].Retained || lv.Level != engine.LevelTeams {
		t.Errorf("retained state: retained %v, level %q, %v", msgs[0].Retained, lv.Level, err)
	}
	var sum api.Summary
	sub.WaitFor("the summary", func(msgs []mosquittotest.Message) bool {
		m, ok := mosquittotest.Last(msgs, base+"/summary")
		return ok && json.Unmarshal([]byte(m.Payload), &sum) == nil && sum.ActiveQuests == 1
	})
}
