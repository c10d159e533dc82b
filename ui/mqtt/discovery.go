package mqtt

import (
	"context"
	"slices"
	"strings"
)

// Home Assistant MQTT discovery: one retained config message per entity,
// on <prefix>/<component>/<node_id>/<object_id>/config.

// Entity is one Home Assistant entity of the box.
type Entity struct {
	Component string // sensor, binary_sensor, event
	Object    string // object id, unique within the box
	Config    map[string]any
}

// Topic is the entity's discovery topic under prefix for node.
func (e Entity) Topic(prefix, node string) string {
	return prefix + "/" + e.Component + "/" + node + "/" + e.Object + "/config"
}

// components are the entity kinds the box announces.
var components = []string{"sensor", "binary_sensor", "event"}

// Verdict outcomes and press kinds the event entities fire with.
var (
	verdictTypes = []string{"PASS", "FAIL", "REVIEW", "DEFERRED"}
	pressTypes   = []string{"short", "long", "triple"}
)

// nodeID is the box's discovery node id (and the prefix of its unique
// ids): stable across reboots because the device id is.
func (c *Client) nodeID() string { return "questbox_" + c.opt.DeviceID }

func (c *Client) birthTopic() string { return c.opt.DiscoveryPrefix + "/status" }

// discoveryFilter matches every discovery config of this box.
func (c *Client) discoveryFilter() string {
	return c.opt.DiscoveryPrefix + "/+/" + c.nodeID() + "/+/config"
}

// parseDiscoveryTopic returns the object id of one of this box's
// discovery topics.
func (c *Client) parseDiscoveryTopic(topic string) (string, bool) {
	rest, ok := strings.CutPrefix(topic, c.opt.DiscoveryPrefix+"/")
	if !ok {
		return "", false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 4 || parts[1] != c.nodeID() || parts[3] != "config" {
		return "", false
	}
	return parts[0] + "/" + parts[2], true
}

// hasEntity reports whether "component/object" is an entity the box
// announces now.
func (c *Client) hasEntity(key string) bool {
	return slices.ContainsFunc(c.Entities(), func(e Entity) bool { return e.Component+"/"+e.Object == key })
}

// Entities are the box's Home Assistant entities, each config complete:
// unique id, device block, availability, state topic.
func (c *Client) Entities() []Entity {
	node := c.nodeID()
	device := map[string]any{
		"identifiers":  []string{node},
		"name":         "questbox " + c.opt.DeviceID,
		"manufacturer": "questbox",
		"model":        "questbox",
		"sw_version":   c.opt.Version,
	}
	if c.opt.DashboardURL != "" {
		device["configuration_url"] = c.opt.DashboardURL
	}
	entity := func(component, object, name string, cfg map[string]any) Entity {
		cfg["name"] = name
		cfg["unique_id"] = node + "_" + object
		cfg["device"] = device
		cfg["origin"] = map[string]any{"name": "questbox", "sw_version": c.opt.Version}
		cfg["availability_topic"] = c.statusTopic()
		cfg["payload_available"] = online
		cfg["payload_not_available"] = offline
		return Entity{Component: component, Object: object, Config: cfg}
	}
	sum := c.summaryTopic()
	sensor := func(object, name, field, icon, class string) Entity {
		return entity("sensor", object, name, map[string]any{
			"state_topic": sum, "value_template": "{{ value_json." + field + " }}",
			"state_class": class, "icon": icon,
		})
	}
	binary := func(object, name, field, icon string, extra map[string]any) Entity {
		cfg := map[string]any{
			"state_topic": sum, "value_template": "{{ 'ON' if value_json." + field + " else 'OFF' }}",
			"payload_on": "ON", "payload_off": "OFF", "icon": icon,
		}
		for k, v := range extra {
			cfg[k] = v
		}
		return entity("binary_sensor", object, name, cfg)
	}
	return []Entity{
		sensor("active_quests", "Active quests", "active_quests", "mdi:map-search", "measurement"),
		sensor("pending_consents", "Pending consents", "pending_consents", "mdi:gesture-tap-button", "measurement"),
		sensor("agent_runs", "Agent runs", "agent_runs", "mdi:robot", "total"),
		sensor("agents_running", "Agents running", "agents_running", "mdi:robot-outline", "measurement"),
		binary("awaiting_consent", "Awaiting consent", "awaiting_consent", "mdi:hand-back-right", nil),
		binary("network", "Network", "online", "mdi:lan", map[string]any{"device_class": "connectivity", "entity_category": "diagnostic"}),
		entity("event", "verdict", "Verdict", map[string]any{
			"state_topic": c.eventTopic("verdict"), "event_types": verdictTypes, "icon": "mdi:gavel",
			"value_template": "{{ {'event_type': value_json.outcome, 'quest': value_json.quest, 'node': value_json.node, 'seq': value_json.seq} | tojson }}",
		}),
		// Device events are also network and broker changes: the template
		// renders nothing for them, and Home Assistant ignores an empty
		// payload.
		entity("event", "button", "Button", map[string]any{
			"state_topic": c.eventTopic("device"), "event_types": pressTypes, "icon": "mdi:gesture-tap-button",
			"value_template": "{% if value_json.device is defined and value_json.device.what == 'press' %}" +
				"{{ {'event_type': value_json.device.press, 'result': value_json.device.result, 'seq': value_json.seq} | tojson }}{% endif %}",
		}),
	}
}

// announce publishes the discovery configs (retained) when discovery is
// on. Configs this box no longer publishes are removed as their retained
// messages arrive (session.reconcile).
func (s *session) announce(ctx context.Context) error {
	c := s.c
	if !c.opt.Discovery {
		return nil
	}
	var msgs []message
	for _, e := range c.Entities() {
		msgs = append(msgs, message{e.Topic(c.opt.DiscoveryPrefix, c.nodeID()), mustJSON(e.Config)})
	}
	// Always publish: Home Assistant may have lost them (its birth).
	return s.publishChanged(ctx, retained{}, msgs)
}
