package api

import (
	"github.com/questbox/questbox/device/box"
	"github.com/questbox/questbox/engine"
)

// DeviceEvent is what a device event says: the button, the network or the
// MQTT broker. What is press, network_up, network_down, broker_up or
// broker_down; the other fields belong to it.
type DeviceEvent struct {
	What   string `json:"what"`
	Press  string `json:"press,omitempty"`  // press: short, long, triple
	Result string `json:"result,omitempty"` // press: what it did
	Target string `json:"target,omitempty"` // network_*: what the probe dials
	Broker string `json:"broker,omitempty"` // broker_*: the broker URL
	Error  string `json:"error,omitempty"`  // *_down: why
	Fault  bool   `json:"fault,omitempty"`  // broker_down: a person must fix it (auth, TLS, config)
}

func deviceEventView(d engine.DeviceEvent) DeviceEvent {
	return DeviceEvent{What: d.What, Press: d.Press, Result: d.Result, Target: d.Target, Broker: d.Broker, Error: d.Error, Fault: d.Fault}
}

// Summary is the box at a glance: what home automation shows (MQTT
// <base>/summary, retained; Home Assistant's sensors read it).
type Summary struct {
	Quests          int `json:"quests"`
	ActiveQuests    int `json:"active_quests"`
	QuestsAttention int `json:"quests_needing_attention"` // terminated, or stopped other than by the owner
	// PendingConsents counts the requests the button can still answer;
	// AwaitingConsent is PendingConsents > 0.
	PendingConsents int  `json:"pending_consents"`
	AwaitingConsent bool `json:"awaiting_consent"`
	AgentsRunning   int  `json:"agents_running"` // agent runs in flight now
	AgentRuns       int  `json:"agent_runs"`     // agent runs used, all quests together
	Online          bool `json:"online"`         // the network probe's last word
	// Fault is what the red LED blinks for, "" when nothing.
	Fault string `json:"fault,omitempty"`
}

// SummaryView sums up the quests and the box's status.
func SummaryView(qs []*engine.Quest, st box.Status) Summary {
	v := Summary{Quests: len(qs), PendingConsents: st.State.ConsentsPending, AwaitingConsent: st.State.ConsentsPending > 0,
		AgentsRunning: st.State.AgentsRunning, Online: st.Online, Fault: st.State.Fault}
	for _, q := range qs {
		if q.Status == engine.QuestActive {
			v.ActiveQuests++
		}
		if q.NeedsAttention() {
			v.QuestsAttention++
		}
		v.AgentRuns += q.Counters.AgentRuns
	}
	return v
}
