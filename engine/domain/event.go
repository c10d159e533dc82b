package domain

import (
	"fmt"
	"strings"
	"time"

	"github.com/questbox/questbox/gates"
)

// Event kinds (docs/design.md, "Events and the outbox").
const (
	KindNode    = "node"
	KindVerdict = "verdict"
	KindConsent = "consent"
	KindQuest   = "quest"
	KindDevice  = "device"
)

// Event is one state change. Seq is per device, strictly increasing, and
// assigned in the transaction that made the change.
type Event struct {
	Seq   uint64    `json:"seq"`
	Time  time.Time `json:"time"`
	Kind  string    `json:"kind"`
	Quest string    `json:"quest,omitempty"`
	Node  string    `json:"node,omitempty"`
	Role  string    `json:"role,omitempty"`
	// Team, Stage and Phase are the node's (kind node), when it has them:
	// the Team a stage node belongs to, its stage, an owner's phase
	// (docs/design.md, "Councils and Teams").
	Team  string `json:"team,omitempty"`
	Stage string `json:"stage,omitempty"`
	Phase string `json:"phase,omitempty"`
	// From and To are node statuses (kind node) or quest statuses (kind quest).
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// Outcome is PASS/FAIL/REVIEW (verdict), requested/granted/rejected/
	// expired (consent), or what happened (device: press, network_up, ...).
	Outcome   string       `json:"outcome,omitempty"`
	Facts     []gates.Fact `json:"facts,omitempty"`
	Feedback  string       `json:"feedback,omitempty"`
	RootCause string       `json:"root_cause,omitempty"`
	ClaimHash string       `json:"claim_hash,omitempty"`
	Reason    string       `json:"reason,omitempty"`
	Counters  *Counters    `json:"counters,omitempty"`
	Detail    string       `json:"detail,omitempty"`
	// Device is what a device event says (kind device; nil in events
	// recorded before device events were typed).
	Device *DeviceEvent `json:"device,omitempty"`
}

// NodeEvent is the event of node n of quest q moving from -> to (from ""
// for a node created).
func NodeEvent(q *Quest, n *Node, from, to Status, why string) Event {
	return Event{Kind: KindNode, Quest: q.ID, Node: n.ID, Role: n.Role, Team: n.Team, Stage: n.Stage, Phase: n.Phase,
		From: string(from), To: string(to), Reason: why}
}

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

// Summary is the event's one-line Detail, for people and old clients.
func (d DeviceEvent) Summary() string {
	var parts []string
	for _, s := range []string{d.Press, d.Result, d.Target, d.Broker, d.Error} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, " ")
}

func (d DeviceEvent) Check() error {
	switch d.What {
	case DevicePress, DeviceNetworkUp, DeviceNetworkDown, DeviceBrokerUp, DeviceBrokerDown:
		return nil
	}
	return fmt.Errorf("device event %q is not one of press, network_up, network_down, broker_up, broker_down: %w", d.What, ErrInvalid)
}
