package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// Keys is a configuration as the keys of its file ("daemon.tick",
// "providers.claude.argv", "gates.g.rules[0].level") and a printed value
// each, for telling which keys two configurations set differently
// ([Changed]). Like the schema, it is read from the configuration's TOML
// encoding, not by a walk over the struct. The values are only compared,
// never shown: some are secrets (mqtt.password).
type Keys struct {
	values map[string]string
}

// Keys returns c's keys and their values.
func (c *Config) Keys() (Keys, error) {
	text, err := toml.Marshal(c)
	if err != nil {
		return Keys{}, fmt.Errorf("config: encode: %w", err)
	}
	var tree map[string]any
	if _, err := toml.Decode(string(text), &tree); err != nil {
		return Keys{}, fmt.Errorf("config: decode the encoding: %w", err)
	}
	k := Keys{values: map[string]string{}}
	k.flatten(nil, tree)
	return k, nil
}

func (k Keys) flatten(p path, v any) {
	if m, ok := v.(map[string]any); ok {
		for name, e := range m {
			k.flatten(p.with(name, -1), e)
		}
		return
	}
	if ts, ok := tables(v); ok && len(p) > 0 {
		last := p[len(p)-1].name
		for i, t := range ts {
			k.flatten(append(p[:len(p)-1:len(p)-1], step{last, i}), t)
		}
		return
	}
	k.values[p.String()] = fmt.Sprintf("%#v", v)
}

// Changed lists, sorted, the keys whose values differ between old and
// new, and those only one of them sets. A running daemon applies those
// that [Reloadable] says it can (SIGHUP); the others need a restart.
func Changed(old, new Keys) []string {
	var out []string
	for k, v := range new.values {
		if ov, ok := old.values[k]; !ok || ov != v {
			out = append(out, k)
		}
	}
	for k := range old.values {
		if _, ok := new.values[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// reloadable are the keys, by their first part or whole, that a running
// daemon takes again on SIGHUP without dropping a run (see Reloadable).
var reloadable = []string{
	"providers", "roles", "gates", "defaults", "judge", "privacy", "council", "teams",
	"mqtt", "dashboard", "logs",
	"gpio.leds_active_low", "gpio.consent_expiry",
	"daemon.memory_limit",
}

// Reloadable reports whether a running daemon applies a change of key
// (as [Changed] names it) on SIGHUP: the providers, roles, gate profiles,
// quest defaults, L2 judge, privacy, council providers and Teams'
// accept criteria (new dispatches use them; runs in flight finish on the
// config they started with), MQTT and the dashboard's settings (their
// sessions start again), the logs' limits, the LEDs' polarity, consent
// expiry and the memory limit. Every other key needs a restart: the data
// directory and the control socket, daemon.listen (a socket that is
// listening), the pins and the GPIO backend (claimed at start), the tick,
// max_parallel, the device id, the network probe and the backups' schedule.
func Reloadable(key string) bool {
	for _, r := range reloadable {
		if key == r || strings.HasPrefix(key, r+".") || strings.HasPrefix(key, r+"[") {
			return true
		}
	}
	return false
}
