package mqtt

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/engine/planttest"
	"github.com/questbox/questbox/gates"
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

// hostile is agent text that tries HTML, terminal escapes (CSI, an OSC 8
// link, a bell) and a bidirectional override on whoever shows it.
const hostile = "<b>bold</b> \x1b[31mred\x1b[0m \x1b]8;;https://evil.example/\x07link\x1b]8;;\x07 bell\x07 \u202eevil\u202c."

// TestConsentSaysWhyOnMQTT: a REVIEW caused by a rule is on <base>/consent
// and on the consent event with the rule's id, its fact and the evidence
// (capped, escaped), Home Assistant's consent entity reads that topic as
// its attributes, and a queue of many large requests stays under the cap.
func TestConsentSaysWhyOnMQTT(t *testing.T) {
	r := newRig(t, mosquittotest.Options{})
	s := r.eng.NewQuestSpec("ocr", "free OCR for Japanese invoices")
	// Twelve REVIEWs of the same rule in a row are no stall here.
	s.Provider, s.Limits.MaxStalled = engine.ProviderExternal, 0
	q, err := r.eng.NewQuest(s)
	if err != nil {
		t.Fatal(err)
	}
	var hyps []string
	for i := range 12 {
		hyps = append(hyps, fmt.Sprintf("engine %d reads receipts", i))
	}
	if _, err := r.eng.Scan(q.ID, hyps); err != nil {
		t.Fatal(err)
	}
	sub := r.broker.Subscribe(t, base+"/#")
	disc := r.broker.Subscribe(t, "homeassistant/#")
	r.start(nil)
	r.waitState("connected", connected)

	evidence := strings.Repeat(hostile+"\n", 15000/len(hostile)) + "THE END"
	ans, _ := json.Marshal(map[string]any{"verdict": "conclusion", "evidence": evidence, "citations": []any{}, "new_directions": []string{}})
	// A 256 KiB answer: the agent's prose around the JSON, then the JSON.
	prose := strings.Repeat(hostile+"\n", (gates.MaxAnswerBytes-len(ans)-64)/(len(hostile)+1))
	res, err := r.eng.Submit(context.Background(), q.ID, "n1", []byte(prose+"```json\n"+string(ans)+"\n```\n"))
	if err != nil || res.Status != engine.AwaitingConsent || len(prose) < 200<<10 {
		t.Fatalf("submit of %d bytes of prose: %+v, %v; want awaiting_consent", len(prose), res, err)
	}
	check := func(where string, c api.Consent) {
		t.Helper()
		if c.Node != "n1" || c.ClaimHash != res.ClaimHash || len(c.Reasons) != 1 || c.Reasons[0].Rule != gates.RuleCitationsPresent ||
			!strings.Contains(c.Reasons[0].Text, "expected at least one citation for a conclusion") {
			t.Errorf("%s: %+v, want n1's citations-present reason", where, c)
		}
		d := c.Deliverable
		if !d.EvidenceCut || !strings.HasSuffix(d.Evidence, "THE END") || strings.ContainsAny(d.Evidence, "\x1b\x07\u202e") {
			t.Errorf("%s: evidence cut %v, %q…; want its escaped end", where, d.EvidenceCut, d.Evidence[:min(len(d.Evidence), 80)])
		}
	}
	var cs []api.Consent
	msgs := sub.WaitFor("the request on <base>/consent", func(msgs []mosquittotest.Message) bool {
		m, ok := mosquittotest.Last(msgs, base+"/consent")
		return ok && json.Unmarshal([]byte(m.Payload), &cs) == nil && len(cs) == 1
	})
	check("<base>/consent", cs[0])
	var ev api.Event
	msgs = sub.WaitFor("the consent event", func(msgs []mosquittotest.Message) bool {
		m, ok := mosquittotest.Last(msgs, base+"/event/consent")
		return ok && json.Unmarshal([]byte(m.Payload), &ev) == nil
	})
	if ev.Outcome != api.ConsentRequested || ev.Consent == nil {
		t.Fatalf("consent event %+v, want a request carrying its view", ev)
	}
	check("the consent event", *ev.Consent)

	// Home Assistant: the consent entity's attributes are that topic.
	cfgs := disc.WaitFor("the consent entity", func(msgs []mosquittotest.Message) bool {
		_, ok := configs(msgs)["homeassistant/binary_sensor/questbox_"+testDevice+"/awaiting_consent/config"]
		return ok
	})
	var cfg map[string]any
	if err := json.Unmarshal([]byte(configs(cfgs)["homeassistant/binary_sensor/questbox_"+testDevice+"/awaiting_consent/config"]), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg["json_attributes_topic"] != base+"/consent" || !strings.Contains(fmt.Sprint(cfg["json_attributes_template"]), "'requests': value_json") {
		t.Errorf("consent entity: attributes from %v with %v", cfg["json_attributes_topic"], cfg["json_attributes_template"])
	}

	// Eleven more large requests: the retained list stays under the cap,
	// the oldest whole.
	for i := 2; i <= 12; i++ {
		ans, _ := json.Marshal(map[string]any{"verdict": "conclusion", "evidence": fmt.Sprintf("engine %d: %s", i, evidence), "citations": []any{}, "new_directions": []string{}})
		if res, err := r.eng.Submit(context.Background(), q.ID, fmt.Sprintf("n%d", i), []byte("```json\n"+string(ans)+"\n```\n")); err != nil || res.Status != engine.AwaitingConsent {
			t.Fatalf("submit n%d: %+v, %v", i, res, err)
		}
	}
	msgs = sub.WaitFor("the twelve requests", func(msgs []mosquittotest.Message) bool {
		m, ok := mosquittotest.Last(msgs, base+"/summary")
		var sum api.Summary
		return ok && json.Unmarshal([]byte(m.Payload), &sum) == nil && sum.PendingConsents == 12
	})
	m, _ := mosquittotest.Last(msgs, base+"/consent")
	if len(m.Payload) > api.MaxConsentPayload || json.Unmarshal([]byte(m.Payload), &cs) != nil || len(cs) == 0 {
		t.Fatalf("<base>/consent is %d bytes (cap %d)", len(m.Payload), api.MaxConsentPayload)
	}
	check("the oldest of twelve", cs[0])
	for _, m := range msgs {
		if strings.HasPrefix(m.Topic, base+"/event/consent") && len(m.Payload) > api.MaxConsentPayload+4096 {
			t.Errorf("a consent event of %d bytes", len(m.Payload))
		}
	}
}
