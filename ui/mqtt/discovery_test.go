package mqtt

import (
	"encoding/json"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/questbox/questbox/ui/api"
	"github.com/questbox/questbox/ui/mqtt/mosquittotest"
)

// haKeys are the discovery keys Home Assistant's MQTT platforms accept
// for each component (a subset: those a box may use). An unknown key makes
// Home Assistant refuse the entity.
var haKeys = map[string][]string{
	"common": {"name", "unique_id", "device", "origin", "availability_topic", "payload_available", "payload_not_available",
		"state_topic", "value_template", "icon", "entity_category", "object_id", "json_attributes_topic", "json_attributes_template"},
	"sensor":        {"state_class", "unit_of_measurement", "device_class", "expire_after", "force_update", "suggested_display_precision"},
	"binary_sensor": {"payload_on", "payload_off", "device_class", "expire_after", "force_update", "off_delay"},
	"event":         {"event_types", "device_class"},
	"button":        {"command_topic", "payload_press", "command_template", "device_class", "retain", "qos"},
	"update":        {"device_class", "latest_version_topic", "latest_version_template", "command_topic", "payload_install", "release_summary", "release_url", "title"},
}

var (
	discoveryTopicRE = regexp.MustCompile(`^homeassistant/(sensor|binary_sensor|event|button|update)/([a-zA-Z0-9_-]+)/([a-zA-Z0-9_-]+)/config$`)
	templateFieldRE  = regexp.MustCompile(`value_json\.([a-z_]+)`)
	attrFieldRE      = regexp.MustCompile(`r\.get\('([a-z_]+)'\)`)
)

// validateDiscovery checks discovery configs the way Home Assistant
// reads them: topic shape, known keys only, a unique id each, a complete
// device block, availability, a state topic of this box, sensor templates
// that read fields the summary has, event types for events.
func validateDiscovery(t *testing.T, configs map[string]string) {
	t.Helper()
	var sum map[string]any
	if err := json.Unmarshal(mustJSON(api.Summary{}), &sum); err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for topic, payload := range configs {
		c, ok := parseDiscovery(t, topic, payload)
		if !ok {
			continue
		}
		c.checkKeys(t)
		uid := c.checkIdentity(t)
		if other, dup := ids[uid]; dup {
			t.Errorf("unique_id %q on both %s and %s", uid, topic, other)
		}
		ids[uid] = topic
		c.checkDevice(t)
		c.checkAvailability(t)
		if c.object == "awaiting_consent" {
			c.checkConsentAttributes(t)
		}
		c.checkState(t, sum)
	}
}

// discoveryConfig is one discovery config: its topic, the parts of the
// topic, and its payload decoded.
type discoveryConfig struct {
	topic, component, node, object string
	cfg                            map[string]any
}

// parseDiscovery reads a discovery config, ok false (and the test failed)
// when its topic or its payload is not one.
func parseDiscovery(t *testing.T, topic, payload string) (discoveryConfig, bool) {
	t.Helper()
	m := discoveryTopicRE.FindStringSubmatch(topic)
	if m == nil {
		t.Errorf("%s is not <prefix>/<component>/<node_id>/<object_id>/config", topic)
		return discoveryConfig{}, false
	}
	c := discoveryConfig{topic: topic, component: m[1], node: m[2], object: m[3]}
	if err := json.Unmarshal([]byte(payload), &c.cfg); err != nil {
		t.Errorf("%s: not JSON: %v", topic, err)
		return discoveryConfig{}, false
	}
	return c, true
}

// str is the config's string k ("" when it has none).
func (c discoveryConfig) str(k string) string { s, _ := c.cfg[k].(string); return s }

// checkKeys: known keys only, for its component.
func (c discoveryConfig) checkKeys(t *testing.T) {
	t.Helper()
	for k := range c.cfg {
		if !slices.Contains(haKeys["common"], k) && !slices.Contains(haKeys[c.component], k) {
			t.Errorf("%s: key %q is not one Home Assistant accepts for a %s", c.topic, k, c.component)
		}
	}
}

// checkIdentity checks the name and the unique id, and returns the id.
func (c discoveryConfig) checkIdentity(t *testing.T) string {
	t.Helper()
	if c.str("name") == "" {
		t.Errorf("%s: no name", c.topic)
	}
	uid := c.str("unique_id")
	if uid == "" || !strings.HasPrefix(uid, c.node+"_") {
		t.Errorf("%s: unique_id %q must be set and start with the node id %s", c.topic, uid, c.node)
	}
	return uid
}

// checkDevice: a complete device block, of this node.
func (c discoveryConfig) checkDevice(t *testing.T) {
	t.Helper()
	dev, _ := c.cfg["device"].(map[string]any)
	idents, _ := dev["identifiers"].([]any)
	if len(idents) == 0 || idents[0] != c.node {
		t.Errorf("%s: device identifiers %v, want [%s]", c.topic, dev["identifiers"], c.node)
	}
	for _, k := range []string{"name", "manufacturer", "model", "sw_version"} {
		if s, _ := dev[k].(string); s == "" {
			t.Errorf("%s: device block without %s", c.topic, k)
		}
	}
	if u, err := url.Parse(dev["configuration_url"].(string)); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		t.Errorf("%s: configuration_url %v is not an http(s) URL", c.topic, dev["configuration_url"])
	}
}

// checkAvailability: the box's status topic, online and offline.
func (c discoveryConfig) checkAvailability(t *testing.T) {
	t.Helper()
	if c.str("availability_topic") != base+"/status" || c.str("payload_available") != "online" || c.str("payload_not_available") != "offline" {
		t.Errorf("%s: availability %q %q/%q, want %s online/offline", c.topic, c.str("availability_topic"), c.str("payload_available"), c.str("payload_not_available"), base+"/status")
	}
}

// checkConsentAttributes: the awaiting-consent entity's attributes are
// the consent queue, a list of api.Consent.
func (c discoveryConfig) checkConsentAttributes(t *testing.T) {
	t.Helper()
	at := c.str("json_attributes_topic")
	var consent map[string]any
	json.Unmarshal(mustJSON(api.Consent{}), &consent)
	fields := attrFieldRE.FindAllStringSubmatch(c.str("json_attributes_template"), -1)
	if at != base+"/consent" || len(fields) == 0 {
		t.Errorf("%s: attributes from %q with template %q, want the consent queue's", c.topic, at, c.str("json_attributes_template"))
	}
	for _, f := range fields {
		if _, ok := consent[f[1]]; !ok {
			t.Errorf("%s: attribute template reads %s, which a consent does not have", c.topic, f[1])
		}
	}
}

// checkState: a state topic of this box, the one of the entity's kind;
// sensor templates that read fields the summary (sum) has; event types
// for events.
func (c discoveryConfig) checkState(t *testing.T, sum map[string]any) {
	t.Helper()
	topic, str := c.topic, c.str
	st := str("state_topic")
	if c.component != "button" && !strings.HasPrefix(st, base+"/") {
		t.Errorf("%s: state_topic %q is not this box's", topic, st)
	}
	quest, isQuest := strings.CutPrefix(c.object, "quest_")
	switch {
	case c.component == "sensor" && isQuest:
		if st != base+"/quest/"+quest+"/state" || str("json_attributes_topic") != st {
			t.Errorf("%s: state_topic %q and attributes %q, want the quest's state", topic, st, str("json_attributes_topic"))
		}
	case c.component == "button":
		q, verb, _ := strings.Cut(quest, "_")
		if !isQuest || str("command_topic") != base+"/cmd/quest/"+q+"/"+verb || str("payload_press") != "{}" {
			t.Errorf("%s: command_topic %q payload %q, want the quest's %s command", topic, str("command_topic"), str("payload_press"), verb)
		}
	case c.component == "update":
		if st != base+"/update" || str("device_class") != "firmware" {
			t.Errorf("%s: state_topic %q device_class %q", topic, st, str("device_class"))
		}
	case c.component == "sensor", c.component == "binary_sensor":
		c.checkSummarySensor(t, sum)
	case c.component == "event":
		types, _ := c.cfg["event_types"].([]any)
		if len(types) == 0 {
			t.Errorf("%s: an event entity needs event_types", topic)
		}
		if !strings.HasPrefix(st, base+"/event/") {
			t.Errorf("%s: state_topic %q is not an event topic", topic, st)
		}
	}
}

// checkSummarySensor: a sensor of the summary whose template reads
// fields it has; a binary one says ON and OFF.
func (c discoveryConfig) checkSummarySensor(t *testing.T, sum map[string]any) {
	t.Helper()
	if st := c.str("state_topic"); st != base+"/summary" {
		t.Errorf("%s: state_topic %q, want the summary", c.topic, st)
	}
	for _, f := range templateFieldRE.FindAllStringSubmatch(c.str("value_template"), -1) {
		if _, ok := sum[f[1]]; !ok {
			t.Errorf("%s: template reads %s, which the summary does not have", c.topic, f[1])
		}
	}
	if c.component == "binary_sensor" && (c.str("payload_on") != "ON" || c.str("payload_off") != "OFF") {
		t.Errorf("%s: payload_on/off %q/%q", c.topic, c.str("payload_on"), c.str("payload_off"))
	}
}

// configs returns the newest non-empty discovery configs of this box.
func configs(msgs []mosquittotest.Message) map[string]string {
	out := map[string]string{}
	for _, m := range msgs {
		if strings.HasSuffix(m.Topic, "/config") && strings.Contains(m.Topic, "/questbox_"+testDevice+"/") {
			if m.Payload == "" {
				delete(out, m.Topic)
			} else {
				out[m.Topic] = m.Payload
			}
		}
	}
	return out
}

func countConfigs(msgs []mosquittotest.Message) int {
	n := 0
	for _, m := range msgs {
		if strings.HasSuffix(m.Topic, "/config") && m.Payload != "" {
			n++
		}
	}
	return n
}

func TestDiscoveryAnnouncesValidatesAndCleansUp(t *testing.T) {
	r := newRig(t, mosquittotest.Options{})
	node := "questbox_" + testDevice
	stale := "homeassistant/sensor/" + node + "/old_sensor/config"
	// Left behind by an earlier firmware, and by a store since replaced.
	r.broker.Publish(t, stale, `{"name":"old"}`, true)
	r.broker.Publish(t, base+"/quest/q999/state", `{"id":"q999"}`, true)
	sub := r.broker.Subscribe(t, "homeassistant/#")
	qsub := r.broker.Subscribe(t, base+"/quest/#")
	c := r.start(nil)
	want := c.Entities()
	msgs := sub.WaitFor("every entity announced and the stale one removed", func(msgs []mosquittotest.Message) bool {
		got := configs(msgs)
		_, old := got[stale]
		return len(got) == len(want) && !old
	})
	got := configs(msgs)
	validateDiscovery(t, got)
	var components []string
	for _, e := range want {
		components = append(components, e.Component+"/"+e.Object)
		if _, ok := got[e.Topic("homeassistant", node)]; !ok {
			t.Errorf("entity %s/%s not announced", e.Component, e.Object)
		}
	}
	for _, w := range []string{"sensor/active_quests", "sensor/pending_consents", "sensor/agent_runs", "binary_sensor/awaiting_consent",
		"binary_sensor/network", "event/verdict", "event/button"} {
		if !slices.Contains(components, w) {
			t.Errorf("no %s entity (have %v)", w, components)
		}
	}
	qsub.WaitFor("the stale quest state removed", func(msgs []mosquittotest.Message) bool {
		m, ok := mosquittotest.Last(msgs, base+"/quest/q999/state")
		return ok && m.Payload == ""
	})
	// Home Assistant restarts: its birth message makes the box announce again.
	n := countConfigs(sub.Messages())
	r.broker.Publish(t, "homeassistant/status", "online", false)
	sub.WaitFor("announced again after the birth message", func(msgs []mosquittotest.Message) bool {
		return countConfigs(msgs) >= n+len(want)
	})
}

func TestDiscoveryOffRemovesTheEntities(t *testing.T) {
	r := newRig(t, mosquittotest.Options{})
	sub := r.broker.Subscribe(t, "homeassistant/#")
	r.start(nil)
	sub.WaitFor("announced", func(msgs []mosquittotest.Message) bool { return len(configs(msgs)) > 0 })
	r.stop()
	r.start(func(o *Options) { o.Discovery = false })
	sub.WaitFor("every entity removed", func(msgs []mosquittotest.Message) bool { return len(configs(msgs)) == 0 })
}

// TestEntitiesAreStable pins the unique ids: Home Assistant keys its
// entities (names, areas, automations) by them.
func TestEntitiesAreStable(t *testing.T) {
	c, err := New(api.Options{}, Options{Broker: "tcp://b:1883", Base: "questbox/pi", DeviceID: "pi"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range c.Entities() {
		got = append(got, e.Config["unique_id"].(string))
	}
	want := []string{"questbox_pi_active_quests", "questbox_pi_pending_consents", "questbox_pi_agent_runs", "questbox_pi_agents_running",
		"questbox_pi_awaiting_consent", "questbox_pi_network", "questbox_pi_verdict", "questbox_pi_button"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("unique ids %v, want %v", got, want)
	}
}
