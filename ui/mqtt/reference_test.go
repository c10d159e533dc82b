package mqtt

import (
	"flag"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/questbox/questbox/internal/reference"
	"github.com/questbox/questbox/ui/api"
	"github.com/questbox/questbox/ui/mqtt/mosquittotest"
)

var update = flag.Bool("update", false, "rewrite docs/reference/mqtt.md")

// mqttReferencePage is the generated reference of the box's MQTT topics
// and Home Assistant entities.
const mqttReferencePage = "../../docs/reference/mqtt.md"

// topicDoc is one topic of the page. Its name is built by the client's
// own topic methods, with placeholders for the ids.
type topicDoc struct {
	topic    string
	out      bool // the box publishes it; else it listens
	retained string
	carries  string
}

// topicDocs are the topics of c. TestReferenceMQTT pins them to what a
// client with everything on publishes and subscribes to.
func topicDocs(c *Client, kinds []string) []topicDoc {
	return []topicDoc{
		{c.statusTopic(), true, "yes", `"online" while the box is connected, "offline" when it stops or its connection dies (the Last Will); Home Assistant's availability`},
		{c.eventTopic("<kind>"), true, "no", "every event, QoS 1, in seq order (de-duplicate by `seq` after a reconnect): an api.Event as JSON; `<kind>` is " + strings.Join(kinds, ", ")},
		{c.questTopic("<id>"), true, "yes", "each quest's state (api.Quest JSON): its status, budgets used and left; an empty message removes a quest gone from the store"},
		{c.consentTopic(), true, "yes", "the consent requests waiting, oldest first (a JSON list of api.Consent)"},
		{c.summaryTopic(), true, "yes", "the counts Home Assistant's sensors read (api.Summary JSON)"},
		{c.updateTopic(), true, "yes", "the firmware running and the newest release the box holds, for Home Assistant's update entity; only when signed updates are set up"},
		{Entity{Component: "<component>", Object: "<object>"}.Topic(c.opt.DiscoveryPrefix, c.nodeID()), true, "yes", "Home Assistant discovery: one config per entity (below); an empty message removes an entity the box no longer has. With `discovery = true` (the default)"},
		{c.birthTopic(), false, "", `Home Assistant's birth message: on "online" the box announces its entities again, after a short random delay. With discovery`},
		{c.cmdPrefix() + "quest/<id>/stop", false, "ignored if retained", "payload `{}`: stop the quest. With `commands = true`"},
		{c.cmdPrefix() + "quest/<id>/resume", false, "ignored if retained", "payload `{}`: resume the quest. With `commands = true`"},
		{c.cmdPrefix() + "consent/<node>/approve", false, "ignored if retained", "payload `{\"claim_hash\": \"<sha256 hex>\"}`: approve the node's consent, only for that claim. With `commands_consent = true`"},
		{c.cmdPrefix() + "consent/<node>/reject", false, "ignored if retained", "payload `{\"claim_hash\": \"<sha256 hex>\"}`: reject it. With `commands_consent = true`"},
	}
}

// eventKinds are the API's event kinds, from its constants.
func eventKinds(t *testing.T) []string {
	t.Helper()
	src, err := reference.Parse("../api")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, c := range src.StringConsts() {
		if strings.HasPrefix(c.Name, "Kind") {
			kinds = append(kinds, c.Value)
		}
	}
	if len(kinds) == 0 {
		t.Fatal("ui/api has no Kind constants")
	}
	return kinds
}

// placeholder is a client whose topics read as the page writes them,
// with every option that adds a topic or an entity on.
func placeholder(t *testing.T, mod func(*Options), ao api.Options) *Client {
	t.Helper()
	opt := Options{Broker: "tcp://broker:1883", Base: "<base>", DeviceID: "<device_id>", DiscoveryPrefix: "<discovery_prefix>",
		Version: "<version>", Discovery: true}
	if mod != nil {
		mod(&opt)
	}
	c, err := New(ao, opt)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestReferenceMQTT generates docs/reference/mqtt.md from the client's
// topic methods and its entities (Entities, QuestEntities) and fails when
// the committed page differs. The topics are pinned to a real client with
// every option on, against a real mosquitto: every topic it publishes
// while a quest runs to a consent is on the page, every topic the page
// says it publishes is published, and what it subscribes to is what the
// page says it listens to. -update rewrites the page.
func TestReferenceMQTT(t *testing.T) {
	kinds := eventKinds(t)
	all := func(o *Options) { o.Commands, o.Consent = true, true }
	withUpdate := api.Options{Update: fakeUpdater{}}
	c := placeholder(t, all, withUpdate)

	var b strings.Builder
	b.WriteString(reference.Header("MQTT and Home Assistant reference",
		"With `[mqtt] broker` set, the box publishes its state and events to the broker and, with\n"+
			"`discovery` on (the default), announces itself to Home Assistant. `<base>` is\n"+
			"`<topic_prefix>/<device_id>` (`questbox/<device_id>` by default), `<discovery_prefix>` is\n"+
			"`homeassistant` by default; `<id>` is a quest, `<node>` a node. Payloads are the JSON the API\n"+
			"answers with (see [api.md](api.md)). The protocol is MQTT 3.1.1; the box publishes at QoS 1."))

	b.WriteString("\n## Topics\n\n")
	var rows [][]string
	for _, d := range topicDocs(c, kinds) {
		dir := "the box listens"
		if d.out {
			dir = "the box publishes"
		}
		rows = append(rows, []string{reference.Code(d.topic), dir, d.retained, reference.Cell(d.carries)})
	}
	reference.Table(&b, []string{"topic", "direction", "retained", "what it carries"}, rows)
	b.WriteString("\nA retained command is never acted on (it may be days old): send commands live, and clear a\n" +
		"retained one with an empty retained message. Anything else under `<base>/cmd/` is logged and ignored.\n")

	b.WriteString("\n## Home Assistant entities\n\n" +
		"Every entity belongs to one device, `questbox <device_id>`, and is unavailable while `<base>/status`\n" +
		"is \"offline\". Its unique id is `questbox_<device_id>_<object>`.\n\n")
	reference.Table(&b, []string{"component", "object", "name", "state from", "attributes", "when"}, entityRows(t, withUpdate))

	page := b.String()
	if err := reference.Lint(page); err != nil {
		t.Error(err)
	}
	reference.Check(t, mqttReferencePage, []byte(page), *update)

	t.Run("topics", func(t *testing.T) { pinTopics(t, kinds) })
}

// entityRows are the box's and a quest's entities, each with the options
// it needs: those it has with commands and signed updates on, and not
// with both off.
func entityRows(t *testing.T, withUpdate api.Options) [][]string {
	t.Helper()
	q := api.Quest{ID: "<id>", Name: "<name>"}
	entities := func(c *Client) []Entity { return append(c.Entities(), c.QuestEntities(q)...) }
	bare := keys(entities(placeholder(t, nil, api.Options{})))
	commands := keys(entities(placeholder(t, func(o *Options) { o.Commands = true }, api.Options{})))
	updates := keys(entities(placeholder(t, nil, withUpdate)))
	field := regexp.MustCompile(`value_json\.(\w+)`)
	attr := regexp.MustCompile(`'(\w+)':`)
	var rows [][]string
	for _, e := range entities(placeholder(t, func(o *Options) { o.Commands, o.Consent = true, true }, withUpdate)) {
		k := e.Component + "/" + e.Object
		when := "always"
		switch {
		case bare[k]:
		case commands[k]:
			when = "with `commands = true`"
		case updates[k]:
			when = "with signed updates (a release key in `/etc/questbox/release.pub`)"
		default:
			t.Errorf("entity %s: no option adds it", k)
		}
		from := ""
		switch cfg := e.Config; {
		case cfg["command_topic"] != nil:
			from = fmt.Sprintf("a press publishes `%v` on `%v`", cfg["payload_press"], cfg["command_topic"])
		case cfg["state_topic"] != nil:
			from = reference.Code(fmt.Sprint(cfg["state_topic"]))
			if tmpl, ok := cfg["value_template"].(string); ok && e.Component != "event" {
				if m := field.FindStringSubmatch(tmpl); m != nil {
					from += " `" + m[1] + "`"
				}
			}
			if types, ok := cfg["event_types"].([]string); ok {
				from += ", event types " + strings.Join(types, ", ")
			}
		default:
			t.Errorf("entity %s reads no topic and publishes none", k)
		}
		attrs := ""
		if tmpl, ok := e.Config["json_attributes_template"].(string); ok {
			var names []string
			for _, m := range attr.FindAllStringSubmatch(tmpl, -1) {
				names = append(names, m[1])
			}
			attrs = strings.Join(names, ", ")
		} else if e.Config["json_attributes_topic"] != nil {
			attrs = "the payload's fields"
		}
		rows = append(rows, []string{e.Component, reference.Code(e.Object), reference.Cell(fmt.Sprint(e.Config["name"])), reference.Cell(from), attrs, when})
	}
	return rows
}

func keys(es []Entity) map[string]bool {
	m := map[string]bool{}
	for _, e := range es {
		m[e.Component+"/"+e.Object] = true
	}
	return m
}

// topicPattern matches the topics a documented topic stands for: each
// <placeholder> is one level.
func topicPattern(topic string) *regexp.Regexp {
	return regexp.MustCompile("^" + regexp.MustCompile(`<\w+>`).ReplaceAllString(regexp.QuoteMeta(topic), `[^/]+`) + "$")
}

// filterPattern matches the topics an MQTT filter matches.
func filterPattern(filter string) *regexp.Regexp {
	p := regexp.QuoteMeta(filter)
	p = strings.ReplaceAll(p, `\+`, `[^/]+`)
	p = strings.ReplaceAll(p, "#", ".*")
	return regexp.MustCompile("^" + p + "$")
}

// pinTopics runs a client with every option on against a real broker
// while a quest runs to a consent request, and holds what it publishes
// and subscribes to against topicDocs.
func pinTopics(t *testing.T, kinds []string) {
	r := newRig(t, mosquittotest.Options{})
	sub := r.broker.Subscribe(t, "#")
	c := r.startAPI(api.Options{Engines: api.Only(r.eng), Update: fakeUpdater{api.UpdateStatus{Running: "v1"}}},
		func(o *Options) { o.Commands, o.Consent = true, true })
	r.waitState("connected", connected)
	// The outbox's consumer starts at the events after it first
	// connected: the quest runs now.
	r.runToConsent()
	docs := topicDocs(c, kinds)
	var out []*regexp.Regexp
	for _, d := range docs {
		if d.out {
			out = append(out, topicPattern(d.topic))
		}
	}
	// Every kind of event, and every topic the page says the box
	// publishes.
	wanted := slices.Clone(out)
	for _, k := range kinds {
		wanted = append(wanted, topicPattern(c.eventTopic(k)))
	}
	msgs := sub.WaitFor("every documented topic published", func(msgs []mosquittotest.Message) bool {
		for _, p := range wanted {
			if !slices.ContainsFunc(msgs, func(m mosquittotest.Message) bool { return p.MatchString(m.Topic) }) {
				return false
			}
		}
		return true
	})
	for _, m := range msgs {
		if !slices.ContainsFunc(out, func(p *regexp.Regexp) bool { return p.MatchString(m.Topic) }) {
			t.Errorf("the box published on %s, which %s does not have", m.Topic, mqttReferencePage)
		}
	}

	// What it listens to: each filter it subscribes to stands for
	// documented topics (its own retained ones, to remove stale ones, or
	// those it listens to), and each topic the page says it listens to is
	// under a filter.
	filters := slices.Sorted(maps.Keys(c.subscriptions()))
	for _, f := range filters {
		fp := filterPattern(f)
		if !slices.ContainsFunc(docs, func(d topicDoc) bool { return fp.MatchString(d.topic) }) {
			t.Errorf("the box subscribes to %s, which stands for no topic of %s", f, mqttReferencePage)
		}
	}
	for _, d := range docs {
		if !d.out && !slices.ContainsFunc(filters, func(f string) bool { return filterPattern(f).MatchString(d.topic) }) {
			t.Errorf("%s says the box listens on %s; it subscribes to %v", mqttReferencePage, d.topic, filters)
		}
	}
}
