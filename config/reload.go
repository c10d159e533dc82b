package config

import (
	"fmt"
	"slices"

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
// new, and those only one of them sets.
//
// A running daemon applies none of them: it reads every key once, when it
// starts. The tick period and the providers are built into the engine,
// the pins are claimed, the socket and the dashboard are listening, the
// MQTT session is up, and the gate profiles of running quests must not
// change under a verdict. Swapping any of these in a running daemon would
// be new code with new failure modes, for a box whose restart takes a
// second and loses nothing. So a reload (SIGHUP) is a check that names
// these keys as taking effect at the next restart.
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
