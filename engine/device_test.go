package engine

import (
	"errors"
	"testing"
)

func TestRecordDeviceEventIsTyped(t *testing.T) {
	h := newHarness(t, Options{})
	if err := h.e.RecordDeviceEvent(DeviceEvent{What: "exploded"}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("unknown device event: got %v, want ErrInvalid", err)
	}
	d := DeviceEvent{What: DeviceBrokerDown, Broker: "tcp://b:1883", Error: "connection refused"}
	if err := h.e.RecordDeviceEvent(d); err != nil {
		t.Fatal(err)
	}
	evs, err := h.e.Events(0, 0)
	if err != nil || len(evs) != 1 {
		t.Fatalf("events %v, %v; want one", evs, err)
	}
	ev := evs[0]
	if ev.Kind != KindDevice || ev.Outcome != DeviceBrokerDown || ev.Device == nil || *ev.Device != d {
		t.Fatalf("got %+v (device %+v), want a typed broker_down event", ev, ev.Device)
	}
	if ev.Detail != "tcp://b:1883 connection refused" {
		t.Errorf("got detail %q, want %q", ev.Detail, "tcp://b:1883 connection refused")
	}
}
