package api

import (
	"testing"

	"github.com/questbox/questbox/device"
	"github.com/questbox/questbox/device/box"
	"github.com/questbox/questbox/engine"
)

func TestGoldenMQTTViews(t *testing.T) {
	golden(t, "device_events", EventViews([]engine.Event{
		{Seq: 10, Time: t0, Kind: engine.KindDevice, Outcome: engine.DevicePress, Detail: "long approved n3",
			Device: &engine.DeviceEvent{What: engine.DevicePress, Press: "long", Result: "approved n3"}},
		{Seq: 11, Time: t0, Kind: engine.KindDevice, Outcome: engine.DeviceNetworkDown, Detail: "1.1.1.1:53",
			Device: &engine.DeviceEvent{What: engine.DeviceNetworkDown, Target: "1.1.1.1:53"}},
		{Seq: 12, Time: t0, Kind: engine.KindDevice, Outcome: engine.DeviceBrokerDown, Detail: "ssl://broker:8883 not Authorized",
			Device: &engine.DeviceEvent{What: engine.DeviceBrokerDown, Broker: "ssl://broker:8883", Error: "not Authorized", Fault: true}},
	}))
	stopped := fixtureQuest()
	stopped.ID, stopped.Status, stopped.Reason = "q2", engine.QuestTerminated, "max_agent_runs reached"
	golden(t, "summary", SummaryView([]*engine.Quest{fixtureQuest(), stopped}, box.Status{
		State: device.State{AgentsRunning: 1, ConsentsPending: 2}, Online: true}))
}

func TestMQTTViewsHoldOnlyOwnTypes(t *testing.T) {
	for _, v := range []any{Summary{}, DeviceEvent{}} {
		checkOwnTypes(t, reflectType(v), map[string]bool{})
	}
}
