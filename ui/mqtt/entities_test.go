package mqtt

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/internal/clock/clocktest"
	"github.com/questbox/questbox/ui/api"
	"github.com/questbox/questbox/ui/mqtt/mosquittotest"
)

// A quest has its own entities: a sensor of its status with its budgets
// as attributes, and, with commands on, buttons that stop and resume it
// (pressed here as Home Assistant presses them: the payload_press on the
// command_topic). A quest made while the client runs gets them at once;
// a stale quest entity of a store since replaced is removed.
func TestQuestEntities(t *testing.T) {
	r := newRig(t, mosquittotest.Options{})
	node := "questbox_" + testDevice
	spec := r.eng.NewQuestSpec("ocr", "free OCR for Japanese invoices")
	spec.Provider = engine.ProviderExternal
	spec.Limits.MaxAgentRuns = 7
	q1, err := r.eng.NewQuest(spec)
	if err != nil {
		t.Fatal(err)
	}
	stale := "homeassistant/sensor/" + node + "/quest_q999/config"
	r.broker.Publish(t, stale, `{"name":"Quest q999"}`, true)
	sub := r.broker.Subscribe(t, "homeassistant/#")
	c := r.start(func(o *Options) { o.Commands = true })
	want := len(c.Entities()) + 3
	sub.WaitFor("the box's and q1's entities, the stale one removed", func(msgs []mosquittotest.Message) bool {
		got := configs(msgs)
		_, old := got[stale]
		return len(got) == want && !old
	})
	got := configs(sub.Messages())
	validateDiscovery(t, got)
	sensor := got["homeassistant/sensor/"+node+"/quest_"+q1.ID+"/config"]
	if !strings.Contains(sensor, `"Quest `+q1.ID+`: ocr"`) {
		t.Errorf("quest sensor %s: want it named after the quest", sensor)
	}

	// Home Assistant reads the sensor's state and attributes from the
	// quest's state topic.
	var state struct {
		Status    string        `json:"status"`
		Used      api.Used      `json:"used"`
		Remaining api.Remaining `json:"remaining"`
	}
	qsub := r.broker.Subscribe(t, base+"/quest/#")
	m := qsub.WaitFor("q1's state", func(msgs []mosquittotest.Message) bool {
		_, ok := mosquittotest.Last(msgs, base+"/quest/"+q1.ID+"/state")
		return ok
	})
	last, _ := mosquittotest.Last(m, base+"/quest/"+q1.ID+"/state")
	if err := json.Unmarshal([]byte(last.Payload), &state); err != nil || state.Status != "active" || state.Remaining.AgentRuns != 7 {
		t.Fatalf("q1's state %s (%v): want active with 7 runs left", last.Payload, err)
	}

	// The stop button, pressed.
	r.broker.Publish(t, base+"/cmd/quest/"+q1.ID+"/stop", "{}", false)
	qsub.WaitFor("q1 stopped", func(msgs []mosquittotest.Message) bool {
		m, ok := mosquittotest.Last(msgs, base+"/quest/"+q1.ID+"/state")
		return ok && strings.Contains(m.Payload, `"status":"stopped"`)
	})

	// A new quest's entities come with its creation.
	q2, err := r.eng.NewQuest(spec)
	if err != nil {
		t.Fatal(err)
	}
	sub.WaitFor("q2's sensor and buttons", func(msgs []mosquittotest.Message) bool {
		got := configs(msgs)
		for _, k := range []string{"sensor/" + node + "/quest_" + q2.ID, "button/" + node + "/quest_" + q2.ID + "_stop", "button/" + node + "/quest_" + q2.ID + "_resume"} {
			if _, ok := got["homeassistant/"+k+"/config"]; !ok {
				return false
			}
		}
		return true
	})
	validateDiscovery(t, configs(sub.Messages()))
}

// Without commands a quest has its sensor only: a button would do nothing.
func TestQuestEntitiesWithoutCommands(t *testing.T) {
	c, err := New(api.Options{}, Options{Broker: "tcp://b:1883", Base: "questbox/pi", DeviceID: "pi"})
	if err != nil {
		t.Fatal(err)
	}
	es := c.QuestEntities(api.Quest{ID: "q1", Name: strings.Repeat("long name ", 20)})
	if len(es) != 1 || es[0].Component != "sensor" {
		t.Fatalf("entities %+v, want the sensor only", es)
	}
	if name := es[0].Config["name"].(string); len([]rune(name)) > 80 || !strings.HasSuffix(name, "…") {
		t.Errorf("name %q: want it cut short", name)
	}
}

// fakeUpdater is a box whose update state is fixed: a release on trial.
type fakeUpdater struct{ st api.UpdateStatus }

func (f fakeUpdater) Install(context.Context, []byte, []byte) (api.UpdateStatus, error) {
	return f.st, nil
}
func (f fakeUpdater) Status() (api.UpdateStatus, error) { return f.st, nil }

// With signed updates configured, the box has Home Assistant's update
// entity: the version running and the newest it holds.
func TestUpdateEntity(t *testing.T) {
	r := newRig(t, mosquittotest.Options{})
	sub := r.broker.Subscribe(t, "homeassistant/#")
	r.startAPI(api.Options{Engines: api.Only(r.eng), Update: fakeUpdater{api.UpdateStatus{Running: "v1.2.0", Trial: "v1.3.0"}}}, nil)
	topic := "homeassistant/update/questbox_" + testDevice + "/firmware/config"
	msgs := sub.WaitFor("the update entity", func(msgs []mosquittotest.Message) bool {
		_, ok := configs(msgs)[topic]
		return ok
	})
	validateDiscovery(t, configs(msgs))
	usub := r.broker.Subscribe(t, base+"/update")
	usub.WaitFor("the update state", func(msgs []mosquittotest.Message) bool { return len(msgs) > 0 })
	// Subscribed once it was published: what comes is the retained state.
	m := r.broker.Subscribe(t, base+"/update").WaitFor("the retained update state", func(msgs []mosquittotest.Message) bool { return len(msgs) > 0 })
	var st map[string]string
	if err := json.Unmarshal([]byte(m[0].Payload), &st); err != nil || st["installed_version"] != "v1.2.0" || st["latest_version"] != "v1.3.0" || !m[0].Retained {
		t.Fatalf("update state %+v (%v, retained %v): want v1.2.0 installed, v1.3.0 latest, retained", st, err, m[0].Retained)
	}
}

// Under load a retained state topic is published at most once per
// StateInterval, and its last state is never lost: a burst of changes
// while the (fake) clock stands still publishes nothing, and the interval
// passing publishes each changed topic once, as it is now.
func TestStatesAreCoalesced(t *testing.T) {
	r := newRig(t, mosquittotest.Options{})
	clk := clocktest.NewClock(time.Unix(1e9, 0))
	spec := r.eng.NewQuestSpec("burst", "many changes at once")
	spec.Provider = engine.ProviderExternal
	q, err := r.eng.NewQuest(spec)
	if err != nil {
		t.Fatal(err)
	}
	topic := base + "/quest/" + q.ID + "/state"
	sub := r.broker.Subscribe(t, topic)
	r.start(func(o *Options) { o.Clock = clk })
	sub.WaitFor("the first state", func(msgs []mosquittotest.Message) bool { return len(msgs) == 1 })

	// Ten changes: stop and resume, five times.
	for range 5 {
		if _, err := r.eng.StopQuest(q.ID, engine.SourceCLI); err != nil {
			t.Fatal(err)
		}
		if _, err := r.eng.ResumeQuest(q.ID, engine.SourceCLI); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.eng.StopQuest(q.ID, engine.SourceCLI); err != nil {
		t.Fatal(err)
	}
	// The first change arms the interval's timer; until it fires nothing
	// of the burst is published.
	clk.BlockUntil(1)
	if n := len(sub.Messages()); n != 1 {
		t.Fatalf("%d messages before the interval passed, want the first only", n)
	}
	clk.Advance(time.Second)
	msgs := sub.WaitFor("the state after the burst", func(msgs []mosquittotest.Message) bool { return len(msgs) >= 2 })
	if !strings.Contains(msgs[1].Payload, `"status":"stopped"`) {
		t.Fatalf("published %s, want the quest as it is now (stopped)", msgs[1].Payload)
	}
}

// During the demo no retained topic gets the same payload twice in a row.
func TestNoRetainedRepeatsDuringTheDemo(t *testing.T) {
	r := newRig(t, mosquittotest.Options{})
	sub := r.broker.Subscribe(t, base+"/#")
	r.start(func(o *Options) { o.Commands = true; o.StateInterval = time.Millisecond })
	id := r.runDemo()
	sub.WaitFor("the finished demo quest's state", func(msgs []mosquittotest.Message) bool {
		m, ok := mosquittotest.Last(msgs, base+"/quest/"+id+"/state")
		return ok && !strings.Contains(m.Payload, `"status":"active"`)
	})
	last := map[string]string{}
	for _, m := range sub.Messages() {
		if strings.Contains(m.Topic, "/event/") {
			continue // events are not retained state
		}
		if prev, ok := last[m.Topic]; ok && prev == m.Payload {
			t.Errorf("%s published twice in a row: %.120s", m.Topic, m.Payload)
		}
		last[m.Topic] = m.Payload
	}
}
