package mqtt

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/questbox/questbox/ui/api"
)

// Home Assistant MQTT discovery: one retained config message per entity,
// on <prefix>/<component>/<node_id>/<object_id>/config.

// Entity is one Home Assistant entity of the box.
type Entity struct {
	Component string // sensor, binary_sensor, event, button, update
	Object    string // object id, unique within the box
	Config    map[string]any
}

// Topic is the entity's discovery topic under prefix for node.
func (e Entity) Topic(prefix, node string) string {
	return prefix + "/" + e.Component + "/" + node + "/" + e.Object + "/config"
}

// components are the entity kinds the box announces.
var components = []string{"sensor", "binary_sensor", "event", "button", "update"}

// Verdict outcomes and press kinds the event entities fire with.
var (
	verdictTypes = []string{"PASS", "FAIL", "REVIEW", "DEFERRED"}
	pressTypes   = []string{"short", "long", "triple"}
)

// consentAttributes makes Home Assistant's attributes of the consent
// queue, which must be a JSON object: the oldest request's node, quest,
// hypothesis and why at the top (what the button answers first, for a
// notification's message), and every request as the API shows it.
const consentAttributes = "{% set r = value_json[0] if value_json else {} %}" +
	"{{ {'count': value_json | length, 'node': r.get('node'), 'quest': r.get('quest'), 'hypothesis': r.get('hypothesis'), " +
	"'why': r.get('why'), 'claim_hash': r.get('claim_hash'), 'requests': value_json} | tojson }}"

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
// announces now: one of the box's own, or one of a quest that exists.
func (c *Client) hasEntity(ctx context.Context, key string) (bool, error) {
	if slices.ContainsFunc(c.Entities(), func(e Entity) bool { return e.Component+"/"+e.Object == key }) {
		return true, nil
	}
	id, ok := questOfEntity(key)
	if !ok {
		return false, nil
	}
	q, err := c.api.Quest(ctx, id)
	if isNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(c.QuestEntities(q), func(e Entity) bool { return e.Component+"/"+e.Object == key }), nil
}

// questOfEntity is the quest id of a quest entity's "component/object".
func questOfEntity(key string) (string, bool) {
	component, object, _ := strings.Cut(key, "/")
	rest, ok := strings.CutPrefix(object, "quest_")
	if !ok {
		return "", false
	}
	switch component {
	case "sensor":
		return rest, idRE.MatchString(rest)
	case "button":
		for _, verb := range []string{"_stop", "_resume"} {
			if id, ok := strings.CutSuffix(rest, verb); ok {
				return id, idRE.MatchString(id)
			}
		}
	}
	return "", false
}

// device is the discovery device block every entity of the box shares.
func (c *Client) device() map[string]any {
	device := map[string]any{
		"identifiers":  []string{c.nodeID()},
		"name":         "questbox " + c.opt.DeviceID,
		"manufacturer": "questbox",
		"model":        "questbox",
		"sw_version":   c.opt.Version,
	}
	if c.opt.DashboardURL != "" {
		device["configuration_url"] = c.opt.DashboardURL
	}
	return device
}

// entity completes a config with what every entity of the box has: its
// name, unique id, device, origin and availability.
func (c *Client) entity(component, object, name string, cfg map[string]any) Entity {
	cfg["name"] = name
	cfg["unique_id"] = c.nodeID() + "_" + object
	cfg["device"] = c.device()
	cfg["origin"] = map[string]any{"name": "questbox", "sw_version": c.opt.Version}
	cfg["availability_topic"] = c.statusTopic()
	cfg["payload_available"] = online
	cfg["payload_not_available"] = offline
	return Entity{Component: component, Object: object, Config: cfg}
}

// questAttributes are a quest sensor's attributes: what it is and what
// it used and has left of its budgets.
const questAttributes = "{{ {'name': value_json.name, 'mode': value_json.mode, 'provider': value_json.provider, " +
	"'reason': value_json.reason, 'used': value_json.used, 'remaining': value_json.remaining} | tojson }}"

// QuestEntities are one quest's entities: a sensor whose state is the
// quest's status and whose attributes are its budgets, and, when MQTT
// commands are on, buttons that stop and resume it.
func (c *Client) QuestEntities(q api.Quest) []Entity {
	name := "Quest " + q.ID
	if q.Name != "" {
		name += ": " + truncate(q.Name, 60)
	}
	st := c.questTopic(q.ID)
	es := []Entity{c.entity("sensor", "quest_"+q.ID, name, map[string]any{
		"state_topic": st, "value_template": "{{ value_json.status }}",
		"json_attributes_topic": st, "json_attributes_template": questAttributes, "icon": "mdi:map-search",
	})}
	if c.opt.Commands {
		for _, verb := range []struct{ verb, label, icon string }{{"stop", "Stop", "mdi:stop"}, {"resume", "Resume", "mdi:play"}} {
			es = append(es, c.entity("button", "quest_"+q.ID+"_"+verb.verb, verb.label+" quest "+q.ID, map[string]any{
				"command_topic": c.cmdPrefix() + "quest/" + q.ID + "/" + verb.verb, "payload_press": "{}", "icon": verb.icon,
			}))
		}
	}
	return es
}

// truncate cuts s to at most n runes, marking the cut.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// Entities are the box's own Home Assistant entities (QuestEntities are
// each quest's), each config complete: unique id, device block,
// availability, state topic.
func (c *Client) Entities() []Entity {
	entity := c.entity
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
	es := []Entity{
		sensor("active_quests", "Active quests", "active_quests", "mdi:map-search", "measurement"),
		sensor("pending_consents", "Pending consents", "pending_consents", "mdi:gesture-tap-button", "measurement"),
		sensor("agent_runs", "Agent runs", "agent_runs", "mdi:robot", "total"),
		sensor("agents_running", "Agents running", "agents_running", "mdi:robot-outline", "measurement"),
		// Its attributes are the consent queue (<base>/consent), the API's
		// views: what waits and why, for an automation's notification.
		binary("awaiting_consent", "Awaiting consent", "awaiting_consent", "mdi:hand-back-right", map[string]any{
			"json_attributes_topic":    c.consentTopic(),
			"json_attributes_template": consentAttributes,
		}),
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
	if c.door.Update != nil {
		// The signed firmware: what runs, and the newest release the box
		// holds (on trial or staged); installing stays `questbox update`
		// or the dashboard, which check the release's signature.
		es = append(es, entity("update", "firmware", "Firmware", map[string]any{
			"state_topic": c.updateTopic(), "device_class": "firmware", "entity_category": "diagnostic",
		}))
	}
	return es
}

// announce publishes the discovery configs (retained) when discovery is
// on. Configs this box no longer publishes are removed as their retained
// messages arrive (session.reconcile).
func (s *session) announce(ctx context.Context) error {
	c := s.c
	if !c.opt.Discovery {
		return nil
	}
	qs, err := c.api.Quests(ctx)
	if err != nil {
		return fmt.Errorf("read quests: %w", err)
	}
	var msgs []message
	for _, e := range c.Entities() {
		msgs = append(msgs, c.entityMessage(e))
	}
	for _, q := range qs {
		for _, e := range c.QuestEntities(q) {
			msgs = append(msgs, c.entityMessage(e))
		}
	}
	// Always publish: Home Assistant may have lost them (its birth).
	return s.publishChanged(ctx, retained{}, msgs)
}

// entityMessage is e's retained discovery config.
func (c *Client) entityMessage(e Entity) message {
	return message{e.Topic(c.opt.DiscoveryPrefix, c.nodeID()), mustJSON(e.Config)}
}
