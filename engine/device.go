package engine

import (
	"fmt"
	"strings"
)

// Device event outcomes (Event.Outcome of a KindDevice event).
const (
	DevicePress       = "press"        // the consent button was pressed
	DeviceNetworkUp   = "network_up"   // the network probe answered again
	DeviceNetworkDown = "network_down" // the network probe stopped answering
	DeviceBrokerUp    = "broker_up"    // the MQTT broker accepted the connection
	DeviceBrokerDown  = "broker_down"  // the MQTT connection failed or was lost
)

// DeviceEvent is what a device event says (Event.Device): a typed record
// of the button, the network or the broker. What is one of the Device*
// outcomes; the other fields belong to it as documented.
type DeviceEvent struct {
	What string `json:"what"`
	// Press is the kind of press (short, long, triple) and Result what
	// it did ("approved n-3", "nothing pending"). press only.
	Press  string `json:"press,omitempty"`
	Result string `json:"result,omitempty"`
	// Target is what the network probe dials. network_* only.
	Target string `json:"target,omitempty"`
	// Broker is the broker URL, without credentials. broker_* only.
	Broker string `json:"broker,omitempty"`
	// Error is why the network or the broker is down; Fault marks an
	// error a person must fix (broker authentication, TLS, configuration).
	Error string `json:"error,omitempty"`
	Fault bool   `json:"fault,omitempty"`
}

// summary is the event's one-line Detail, for people and old clients.
func (d DeviceEvent) summary() string {
	var parts []string
	for _, s := range []string{d.Press, d.Result, d.Target, d.Broker, d.Error} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, " ")
}

func (d DeviceEvent) check() error {
	switch d.What {
	case DevicePress, DeviceNetworkUp, DeviceNetworkDown, DeviceBrokerUp, DeviceBrokerDown:
		return nil
	}
	return fmt.Errorf("device event %q is not one of press, network_up, network_down, broker_up, broker_down: %w", d.What, ErrInvalid)
}

// RecordDeviceEvent appends a device event (button press, network or
// broker up and down) to the outbox: one commit, shared with the writes
// that arrive at the same time.
func (e *Engine) RecordDeviceEvent(d DeviceEvent) error {
	if err := d.check(); err != nil {
		return err
	}
	return e.batch(func(t *txn) error {
		return t.emit(Event{Kind: KindDevice, Outcome: d.What, Detail: d.summary(), Device: &d})
	}, nil)
}
