package config

import (
	"slices"
	"testing"
)

func mustKeys(t *testing.T, c *Config) Keys {
	t.Helper()
	k, err := c.Keys()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestChangedKeys pins what a reload compares: one entry per key of the
// file, each change named once, values never shown.
func TestChangedKeys(t *testing.T) {
	base := mustKeys(t, Default())
	for _, want := range []string{"daemon.tick", "daemon.grace", "gpio.green", "mqtt.broker", "network.probe", "defaults.roles"} {
		if !slices.Contains(base.names(), want) {
			t.Errorf("Keys lacks %s; has %v", want, base.names())
		}
	}
	c, err := Parse([]byte(`[daemon]
tick = "5m"
[providers.local]
type = "openai"
base_url = "http://127.0.0.1:11434/v1"
model = "m"
[gates.strict]
rules = [{ id = "contract", kind = "contract", level = "fail" }]
[mqtt]
broker = "tcp://127.0.0.1:1883"
username = "qb"
password = "s3cret"
`), "new.toml")
	if err != nil {
		t.Fatal(err)
	}
	next := mustKeys(t, c)
	got := Changed(base, next)
	for _, want := range []string{"daemon.tick", "mqtt.broker", "mqtt.password", "providers.local.model", "gates.strict.rules[0].level"} {
		if !slices.Contains(got, want) {
			t.Errorf("Changed = %v, lacks %s", got, want)
		}
	}
	for _, unchanged := range []string{"daemon.grace", "gpio.green"} {
		if slices.Contains(got, unchanged) {
			t.Errorf("Changed = %v names the unchanged %s", got, unchanged)
		}
	}
	for _, k := range got {
		if k == "s3cret" {
			t.Errorf("Changed shows a value: %v", got)
		}
	}
	if again := Changed(next, mustKeys(t, c)); len(again) != 0 {
		t.Errorf("a config compared with itself changed %v", again)
	}
	if back := Changed(next, base); !slices.Equal(back, got) {
		t.Errorf("Changed(new, old) = %v, want the same keys as Changed(old, new) %v", back, got)
	}
}

// TestReloadable pins which keys a running daemon applies on SIGHUP and
// which need a restart.
func TestReloadable(t *testing.T) {
	for key, want := range map[string]bool{
		"providers.local.model":       true,
		"roles.owner.template":        true,
		"gates.strict.rules[0].level": true,
		"defaults.provider":           true,
		"judge.light.model":           true,
		"privacy.redact[0]":           true,
		"council.judges":              true,
		"teams.scout.accept":          true,
		"mqtt.broker":                 true,
		"dashboard.read":              true,
		"logs.total":                  true,
		"gpio.leds_active_low":        true,
		"gpio.consent_expiry":         true,
		"daemon.memory_limit":         true,
		"daemon.data":                 false,
		"daemon.socket":               false,
		"daemon.listen":               false,
		"daemon.tick":                 false,
		"daemon.max_parallel":         false,
		"gpio.green":                  false,
		"gpio.backend":                false,
		"gpio.act_led":                false,
		"network.probe":               false,
		"backup.every":                false,
		"providersx":                  false,
	} {
		if got := Reloadable(key); got != want {
			t.Errorf("Reloadable(%q) = %v, want %v", key, got, want)
		}
	}
}
