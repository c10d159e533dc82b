package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

// problemsOf flattens a joined error into its *Error parts, failing the test
// if any part is not an *Error wrapping ErrInvalid.
func problemsOf(t *testing.T, err error) []*Error {
	t.Helper()
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("error does not wrap ErrInvalid: %v", err)
	}
	var parts []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		parts = j.Unwrap()
	} else {
		parts = []error{err}
	}
	var out []*Error
	for _, p := range parts {
		var e *Error
		if !errors.As(p, &e) {
			t.Fatalf("part %q is not a *config.Error", p)
		}
		out = append(out, e)
	}
	return out
}

func TestDefaultValidates(t *testing.T) {
	c := Default()
	if err := c.Validate(); err != nil {
		t.Fatalf("Default().Validate() = %v, want nil", err)
	}
	if c.Path != "" {
		t.Errorf("Default().Path = %q, want \"\"", c.Path)
	}
	// Fresh values each call: callers may modify what they get.
	c.Defaults.Roles[0] = "changed"
	c.Providers["x"] = Provider{}
	if d := Default(); d.Defaults.Roles[0] != "scout" || len(d.Providers) != 0 {
		t.Errorf("Default() shares state between calls: %+v", d.Defaults.Roles)
	}
}

func TestDefaultValues(t *testing.T) {
	c := Default()
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"daemon.data", c.Daemon.Data, "/var/lib/questbox"},
		{"daemon.tick", c.Daemon.Tick.Duration, 60 * time.Second},
		{"daemon.max_parallel", c.Daemon.MaxParallel, 2},
		{"daemon.listen", c.Daemon.Listen, "127.0.0.1:8080"},
		{"daemon.grace", c.Daemon.Grace.Duration, 30 * time.Second},
		{"daemon.event_retention", c.Daemon.EventRetention, 10000},
		{"daemon.memory_limit", c.Daemon.MemoryLimit, MemoryLimit(24 << 20)},
		{"defaults.mode", c.Defaults.Mode, "team"},
		{"defaults.provider", c.Defaults.Provider, "demo"},
		{"defaults.max_tries", c.Defaults.MaxTries, 3},
		{"defaults.max_agent_runs", c.Defaults.MaxAgentRuns, 50},
		{"defaults.wall_clock", c.Defaults.WallClock.Duration, 24 * time.Hour},
		{"defaults.token_budget", c.Defaults.TokenBudget, 1000000},
		{"defaults.max_stalled", c.Defaults.MaxStalled, 3},
		{"defaults.roles", c.Defaults.Roles, []string{"scout", "poc", "strategist", "owner"}},
		{"defaults.checkpoints", len(c.Defaults.Checkpoints), 0},
		{"defaults.owner_every", c.Defaults.OwnerEvery, 3},
		{"defaults.gate", c.Defaults.Gate, "default"},
		{"gates", c.GateNames(), []string{"default"}},
		{"judge", c.Judge == nil, true},
		{"network.probe", c.Network.Probe, "1.1.1.1:53"},
		{"network.probe_ttl", c.Network.ProbeTTL.Duration, 30 * time.Second},
		{"network.fetch_timeout", c.Network.FetchTimeout.Duration, 10 * time.Second},
		{"network.max_body", c.Network.MaxBody, MiB},
		{"network.allow_private", c.Network.AllowPrivate, false},
		{"logs.per_run", c.Logs.PerRun, 256 * KiB},
		{"logs.total", c.Logs.Total, 64 * MiB},
		{"gpio.button_pull", c.GPIO.ButtonPull, ""},
		{"gpio.backend", c.GPIO.Backend, "auto"},
		{"gpio.pins", []int{c.GPIO.Green, c.GPIO.Amber, c.GPIO.Red, c.GPIO.Button}, []int{17, 27, 22, 23}},
		{"gpio.leds_active_low", c.GPIO.ActiveLow, false},
		{"gpio.button_active_high", c.GPIO.ButtonActiveHigh, false},
		{"gpio.debounce", c.GPIO.Debounce.Duration, 50 * time.Millisecond},
		{"gpio.long_press", c.GPIO.LongPress.Duration, 2 * time.Second},
		{"gpio.multi_press_gap", c.GPIO.MultiPressGap.Duration, 400 * time.Millisecond},
		{"gpio.consent_expiry", c.GPIO.ConsentExpiry.Duration, time.Duration(0)},
		{"mqtt.enabled", c.MQTT.Enabled(), false},
		{"mqtt.topic_prefix", c.MQTT.TopicPrefix, "questbox"},
		{"socket", c.SocketPath(), "/var/lib/questbox/questbox.sock"},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if !regexp.MustCompile(`^[a-z0-9_-]+$`).MatchString(c.Daemon.DeviceID) {
		t.Errorf("default device_id %q does not match [a-z0-9_-]+", c.Daemon.DeviceID)
	}
}

const exampleFile = "../../systemd/questbox.toml"

// TestExampleFileIsDefault pins that the documented config parses and that its
// uncommented values are exactly the built-in defaults, but
// privacy.egress_consent: the installed file (the image's, the .deb's)
// turns it on, while a box with no config file (`make run`) runs its demo
// without it.
func TestExampleFileIsDefault(t *testing.T) {
	got, err := Load(exampleFile)
	if err != nil {
		t.Fatalf("Load(%s): %v", exampleFile, err)
	}
	if got.Path != exampleFile {
		t.Errorf("Path = %q, want %q", got.Path, exampleFile)
	}
	if Default().Privacy.EgressConsent || !got.Privacy.EgressConsent {
		t.Errorf("privacy.egress_consent: built in %v, in %s %v; want off built in, on in the file",
			Default().Privacy.EgressConsent, exampleFile, got.Privacy.EgressConsent)
	}
	want := Default()
	want.Path = exampleFile
	want.Privacy.EgressConsent = true
	if !reflect.DeepEqual(got, want) {
		t.Errorf("example config differs from Default():\n got %+v\nwant %+v", got, want)
	}
}

// TestExampleFileExamples uncomments every example line ("#key = ..." or
// "#[table]", no space after the #) and checks the result is valid too, so
// the examples users copy cannot rot.
func TestExampleFileExamples(t *testing.T) {
	data, err := os.ReadFile(exampleFile)
	if err != nil {
		t.Fatal(err)
	}
	example := regexp.MustCompile(`(?m)^#([a-z\[])`).ReplaceAll(data, []byte("$1"))
	c, err := Parse(example, "uncommented.toml")
	if err != nil {
		t.Fatalf("examples do not parse:\n%v", err)
	}
	if _, ok := c.Providers["claude"]; !ok {
		t.Errorf("providers.claude missing; providers = %v", c.Providers)
	}
	if p := c.Providers["local"]; p.Type != TypeOpenAI || p.Timeout.Duration != 20*time.Minute || p.OutputCap != MiB {
		t.Errorf("providers.local = %+v", p)
	}
	if !c.MQTT.Enabled() || c.Daemon.DeviceID != "kitchen-pi" || len(c.Defaults.Checkpoints) != 1 {
		t.Errorf("examples not applied: mqtt %+v device_id %q checkpoints %v", c.MQTT, c.Daemon.DeviceID, c.Defaults.Checkpoints)
	}
	if cat, err := c.Catalog("research"); err != nil || len(cat.Describe()) != 5 {
		t.Errorf("gates.research: %v", err)
	}
	if c.Judge == nil || c.Judge.Light.Provider != "local" || c.Judge.Heavy.Provider != "claude" {
		t.Errorf("judge example not applied: %+v", c.Judge)
	}
}

// TestExampleFileDocumentsEveryKey pins that each key of the schema appears in
// the example file, commented or not.
func TestExampleFileDocumentsEveryKey(t *testing.T) {
	data, err := os.ReadFile(exampleFile)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, k := range knownKeys().keys {
		leaf := k[len(k)-1]
		if len(k) == 1 {
			if !strings.Contains(text, "["+leaf) {
				t.Errorf("table [%s] is not documented in %s", leaf, exampleFile)
			}
			continue
		}
		if leaf == anyName {
			continue
		}
		if !regexp.MustCompile(`(?m)^#?\s*` + leaf + `\b`).MatchString(text) {
			t.Errorf("key %s is not documented in %s", strings.Join(k, "."), exampleFile)
		}
	}
}

func TestParseValid(t *testing.T) {
	for _, tc := range []struct {
		name  string
		file  string
		check func(t *testing.T, c *Config)
	}{
		{"empty file is the defaults", "", func(t *testing.T, c *Config) {
			want := Default()
			want.Path = "questbox.toml"
			if !reflect.DeepEqual(c, want) {
				t.Errorf("got %+v, want %+v", c, want)
			}
		}},
		{"comments only", "# nothing\n\n", func(t *testing.T, c *Config) {
			if c.Daemon.Tick.Duration != time.Minute {
				t.Errorf("tick = %v, want 1m", c.Daemon.Tick)
			}
		}},
		{"daemon overrides", `
[daemon]
data = "./data"
tick = "5s"
max_parallel = 1
listen = ":0"
device_id = "box_1"
socket = "/run/qb.sock"
grace = "0s"
event_retention = 100
`, func(t *testing.T, c *Config) {
			d := c.Daemon
			if d.Data != "./data" || d.Tick.Duration != 5*time.Second || d.MaxParallel != 1 || d.Listen != ":0" ||
				d.DeviceID != "box_1" || d.Grace.Duration != 0 || d.EventRetention != 100 {
				t.Errorf("daemon = %+v", d)
			}
			if got := c.SocketPath(); got != "/run/qb.sock" {
				t.Errorf("SocketPath() = %q, want /run/qb.sock", got)
			}
			// Untouched sections keep their defaults.
			if c.GPIO.Green != 17 || c.Defaults.Mode != "team" {
				t.Errorf("defaults lost: gpio %+v defaults %+v", c.GPIO, c.Defaults)
			}
		}},
		{"memory limit with a unit", "[daemon]\nmemory_limit = \"32MiB\"\n", func(t *testing.T, c *Config) {
			if c.Daemon.MemoryLimit != MemoryLimit(32<<20) {
				t.Errorf("memory_limit = %v, want 32MiB", c.Daemon.MemoryLimit)
			}
		}},
		{"memory limit in bytes", "[daemon]\nmemory_limit = 50000000\n", func(t *testing.T, c *Config) {
			if c.Daemon.MemoryLimit != 50_000_000 || c.Daemon.MemoryLimit.String() != "50MB" {
				t.Errorf("memory_limit = %v, want 50MB", c.Daemon.MemoryLimit)
			}
		}},
		{"memory limit off", "[daemon]\nmemory_limit = \"Off\"\n", func(t *testing.T, c *Config) {
			if c.Daemon.MemoryLimit != MemoryLimitOff || c.Daemon.MemoryLimit.String() != "off" {
				t.Errorf("memory_limit = %v, want off", c.Daemon.MemoryLimit)
			}
		}},
		{"solo without owner, checkpoints", `
[defaults]
mode = "solo"
roles = ["poc", "strategist", "reviewer"]
checkpoints = ["reviewer"]
max_tries = 1
`, func(t *testing.T, c *Config) {
			if !reflect.DeepEqual(c.Defaults.Roles, []string{"poc", "strategist", "reviewer"}) ||
				!reflect.DeepEqual(c.Defaults.Checkpoints, []string{"reviewer"}) {
				t.Errorf("defaults = %+v", c.Defaults)
			}
		}},
		{"command provider gets defaults", `
[defaults]
provider = "agent"
[providers.agent]
type = "command"
argv = ["/bin/cat"]
`, func(t *testing.T, c *Config) {
			p := c.Providers["agent"]
			if p.Timeout.Duration != 10*time.Minute || p.OutputCap != MiB || !reflect.DeepEqual(p.Env, []string{"PATH", "HOME", "LANG"}) {
				t.Errorf("provider = %+v, want timeout 10m, output_cap 1MiB, env PATH HOME LANG", p)
			}
			if !c.HasProvider("agent") || !c.HasProvider("demo") || !c.HasProvider("external") || c.HasProvider("nope") {
				t.Errorf("HasProvider wrong for %v", c.Providers)
			}
		}},
		{"command provider explicit values", `
[providers.agent]
type = "command"
argv = ["agent", "-q"]
env = []
dir = "/tmp"
timeout = "90s"
output_cap = 4096
`, func(t *testing.T, c *Config) {
			p := c.Providers["agent"]
			if p.Timeout.Duration != 90*time.Second || p.OutputCap != 4096 || p.Env == nil || len(p.Env) != 0 || p.Dir != "/tmp" {
				t.Errorf("provider = %+v, want timeout 90s, output_cap 4096, env [] (not nil), dir /tmp", p)
			}
		}},
		{"openai provider", `
[providers.llm-1]
type = "openai"
base_url = "http://127.0.0.1:8081/v1"
model = "qwen"
api_key_env = "LLM_KEY"
max_tokens = 2048
output_cap = "512KiB"
`, func(t *testing.T, c *Config) {
			p := c.Providers["llm-1"]
			if p.Model != "qwen" || p.APIKeyEnv != "LLM_KEY" || p.MaxTokens != 2048 || p.OutputCap != 512*KiB ||
				p.Timeout.Duration != 10*time.Minute || p.Env != nil {
				t.Errorf("provider = %+v", p)
			}
		}},
		{"gpio rewired", `
[gpio]
backend = "sim"
green = 5
amber = 6
red = 13
button = 26
leds_active_low = true
button_active_high = true
debounce = "20ms"
long_press = "3s"
act_led = true
consent_expiry = "1h"
`, func(t *testing.T, c *Config) {
			g := c.GPIO
			if g.Backend != "sim" || g.Green != 5 || g.Button != 26 || !g.ActiveLow || !g.ButtonActiveHigh ||
				g.LongPress.Duration != 3*time.Second || !g.ActLED || g.ConsentExpiry.Duration != time.Hour {
				t.Errorf("gpio = %+v", g)
			}
		}},
		{"mqtt", `
[daemon]
device_id = "pi"
[mqtt]
broker = "ssl://127.0.0.1:8883"
username = "qb"
cert_file = "/c.pem"
key_file = "/c.key"
commands = true
commands_consent = true
`, func(t *testing.T, c *Config) {
			if !c.MQTT.Enabled() || c.MQTTClientID() != "questbox-pi" || c.MQTT.DiscoveryPrefix != "homeassistant" {
				t.Errorf("mqtt = %+v, client id %q", c.MQTT, c.MQTTClientID())
			}
		}},
		{"mqtt table without a broker is off", `
[mqtt]
topic_prefix = "qb"
discovery = false
commands = true
`, func(t *testing.T, c *Config) {
			if c.MQTT.Enabled() || c.MQTT.TopicPrefix != "qb" {
				t.Errorf("mqtt = %+v, want off with topic_prefix qb", c.MQTT)
			}
		}},
		{"inline tables and dotted keys", `
daemon.tick = "2s"
providers.x = { type = "command", argv = ["x"] }
`, func(t *testing.T, c *Config) {
			if c.Daemon.Tick.Duration != 2*time.Second || c.Providers["x"].Argv[0] != "x" {
				t.Errorf("got tick %v providers %v", c.Daemon.Tick, c.Providers)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(tc.file), "questbox.toml")
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if c.Path != "questbox.toml" {
				t.Errorf("Path = %q, want questbox.toml", c.Path)
			}
			tc.check(t, c)
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		file string
		want []string // the error messages, in order, without the "questbox.toml: " prefix
	}{
		// Syntax (positions are tested in TestSyntaxErrorPosition).
		{"unknown key", "[daemon]\ntik = \"5s\"\n",
			[]string{"unknown key daemon.tik (did you mean daemon.tick?)"}},
		{"unknown key, transposed", "[defaults]\nmax_tires = 2\n",
			[]string{"unknown key defaults.max_tires (did you mean defaults.max_tries?)"}},
		{"unknown table", "[deamon]\ntick = \"5s\"\n",
			[]string{"unknown key deamon (did you mean daemon?)"}},
		{"key outside its table", "tick = \"5s\"\n",
			[]string{"unknown key tick (did you mean daemon.tick?)"}},
		{"key in the wrong table", "[defaults]\nmax_parallel = 4\n",
			[]string{"unknown key defaults.max_parallel (did you mean daemon.max_parallel?)"}},
		{"unknown key, no suggestion", "[gpio]\nwibble = 1\n",
			[]string{"unknown key gpio.wibble"}},
		{"unknown provider key", "[providers.x]\ntype = \"command\"\nargs = [\"x\"]\n",
			[]string{"unknown key providers.x.args (did you mean providers.x.argv?)"}},
		{"all unknown keys reported", "[daemon]\ntik = \"1s\"\n[gpio]\ngren = 1\n",
			[]string{"unknown key daemon.tik (did you mean daemon.tick?)", "unknown key gpio.gren (did you mean gpio.green?)"}},

		// Types and formats.
		{"bad duration", "[daemon]\ntick = \"5 minutes\"\n",
			[]string{`daemon.tick: "5 minutes" is not a duration (use 90s, 5m, 24h)`}},
		{"duration as integer", "[daemon]\ngrace = 30\n",
			[]string{`daemon.grace: 30 is not a duration (use 90s, 5m, 24h); write it as a string, e.g. "30s"`}},
		{"duration as a table", "[daemon.grace]\n",
			[]string{`daemon.grace: a table is not a duration (use 90s, 5m, 24h)`}},
		{"size as a float", "[network]\nmax_body = 1.5\n",
			[]string{`network.max_body: 1.5 is not a size (use 1MiB, 512KiB, 50MB or a number of bytes)`}},
		{"bad size", "[providers.x]\ntype = \"command\"\nargv = [\"x\"]\noutput_cap = \"lots\"\n",
			[]string{`providers.x.output_cap: "lots" is not a size (use 1MiB, 512KiB, 50MB or a number of bytes)`}},
		{"negative size", "[providers.x]\ntype = \"command\"\nargv = [\"x\"]\noutput_cap = -1\n",
			[]string{`providers.x.output_cap: -1 is negative`}},
		{"string for integer", "[daemon]\nmax_parallel = \"two\"\n",
			[]string{`daemon.max_parallel: "two" is a string, want an integer`}},
		{"float for integer", "[defaults]\nmax_tries = 2.5\n",
			[]string{`defaults.max_tries: 2.5 is a float, want an integer`}},
		{"integer for string", "[defaults]\nmode = 1\n",
			[]string{`defaults.mode: 1 is an integer, want a string`}},
		{"string for bool", "[gpio]\nact_led = \"yes\"\n",
			[]string{`gpio.act_led: "yes" is a string, want a boolean (true or false)`}},
		{"string for array", "[defaults]\nroles = \"scout\"\n",
			[]string{`defaults.roles: "scout" is a string, want an array`}},
		{"bad array element", "[defaults]\nroles = [\"scout\", 2]\n",
			[]string{`defaults.roles: element 1: 2 is an integer, want a string`}},
		{"value for table", "daemon = 1\n",
			[]string{`daemon: 1 is an integer, want a table`}},
		{"array of tables for providers", "[[providers]]\ntype = \"command\"\n",
			[]string{`providers: got an array of tables, want a table`}},
		{"all type errors reported", "[daemon]\ntick = \"x\"\nmax_parallel = \"y\"\nbogus = 1\n",
			[]string{`daemon.tick: "x" is not a duration (use 90s, 5m, 24h)`,
				`daemon.max_parallel: "y" is a string, want an integer`,
				`unknown key daemon.bogus`}},

		// Validation: daemon.
		{"tick below 1s", "[daemon]\ntick = \"500ms\"\n",
			[]string{`daemon.tick: 500ms is below the minimum 1s`}},
		{"max_parallel 0", "[daemon]\nmax_parallel = 0\n",
			[]string{`daemon.max_parallel: 0 is below the minimum 1`}},
		{"max_parallel negative", "[daemon]\nmax_parallel = -2\n",
			[]string{`daemon.max_parallel: -2 is negative; the minimum is 1`}},
		{"empty data", "[daemon]\ndata = \"\"\n",
			[]string{`daemon.data: empty; the daemon needs a data directory, e.g. /var/lib/questbox`}},
		{"bad listen", "[daemon]\nlisten = \"8080\"\n",
			[]string{`daemon.listen: "8080" is not host:port (e.g. 127.0.0.1:8080 or :8080)`}},
		{"empty listen", "[daemon]\nlisten = \"\"\n",
			[]string{`daemon.listen: "" is empty; use host:port, e.g. 127.0.0.1:8080 or :8080`}},
		{"bad listen port", "[daemon]\nlisten = \":http\"\n",
			[]string{`daemon.listen: ":http" has no valid port (0..65535)`}},
		{"bad device id", "[daemon]\ndevice_id = \"Kitchen Pi\"\n",
			[]string{`daemon.device_id: "Kitchen Pi" must match [a-z0-9_-]+ (it names the box in MQTT topics)`}},
		{"socket path too long", "[daemon]\nsocket = \"/" + strings.Repeat("s", 120) + "\"\n",
			[]string{`daemon.socket: control socket path "/` + strings.Repeat("s", 120) + `" is 121 bytes, longer than the 107 a unix socket allows; set daemon.socket to a shorter path`}},
		{"negative grace", "[daemon]\ngrace = \"-1s\"\n",
			[]string{`daemon.grace: -1s is negative`}},
		{"negative retention", "[daemon]\nevent_retention = -1\n",
			[]string{`daemon.event_retention: -1 is negative; the minimum is 100`}},
		{"retention keeping none", "[daemon]\nevent_retention = 0\n",
			[]string{`daemon.event_retention: 0 is below the minimum 100`}},
		{"memory limit not a size", "[daemon]\nmemory_limit = \"lots\"\n",
			[]string{`daemon.memory_limit: "lots" is not a memory limit (use 24MiB, 64MiB, or "off" for none)`}},
		{"memory limit with an unknown unit", "[daemon]\nmemory_limit = \"24 MeB\"\n",
			[]string{`daemon.memory_limit: "24 MeB" is not a memory limit (use 24MiB, 64MiB, or "off" for none)`}},
		{"memory limit negative", "[daemon]\nmemory_limit = -1\n",
			[]string{`daemon.memory_limit: -1 is negative (use 24MiB, 64MiB, or "off" for none)`}},
		{"memory limit a bool", "[daemon]\nmemory_limit = false\n",
			[]string{`daemon.memory_limit: false is not a memory limit (use 24MiB, 64MiB, or "off" for none)`}},
		{"memory limit too low", "[daemon]\nmemory_limit = \"4MiB\"\n",
			[]string{`daemon.memory_limit: 4MiB is below the minimum 8MiB (the collector would run back to back); write "off" for no limit`}},

		// Validation: defaults.
		{"bad mode", "[defaults]\nmode = \"duo\"\n",
			[]string{`defaults.mode: "duo" is not one of team, solo`}},
		{"unknown default provider", "[defaults]\nprovider = \"llm\"\n",
			[]string{`defaults.provider: "llm" is not a provider (built in: demo, external; none configured)`}},
		{"unknown default provider with others configured", "[defaults]\nprovider = \"llm\"\n[providers.agent]\ntype = \"command\"\nargv = [\"a\"]\n",
			[]string{`defaults.provider: "llm" is not a provider (built in: demo, external; configured: agent)`}},
		{"negative budgets", "[defaults]\nmax_tries = -1\nmax_agent_runs = -1\nwall_clock = \"-1h\"\ntoken_budget = -5\nmax_stalled = -1\nowner_every = -1\n",
			[]string{`defaults.max_tries: -1 is negative; the minimum is 1`,
				`defaults.max_agent_runs: -1 is negative; the minimum is 1`,
				`defaults.wall_clock: -1h is negative`,
				`defaults.token_budget: -5 is negative; the minimum is 1`,
				`defaults.max_stalled: -1 is negative; the minimum is 1`,
				`defaults.owner_every: -1 is negative; the minimum is 1`}},
		{"zero budgets", "[defaults]\ntoken_budget = 0\nwall_clock = \"0s\"\n",
			[]string{`defaults.wall_clock: must be longer than 0s`,
				`defaults.token_budget: 0 is below the minimum 1`}},
		{"checkpoint not a role", "[defaults]\ncheckpoints = [\"reviewer\"]\n",
			[]string{`defaults.checkpoints: "reviewer" is not one of the roles (scout, poc, strategist, owner)`}},
		{"checkpoint twice", "[defaults]\ncheckpoints = [\"owner\", \"owner\"]\n",
			[]string{`defaults.checkpoints: "owner" is listed twice`}},
		{"no roles", "[defaults]\nroles = []\n",
			[]string{`defaults.roles: empty; a quest needs at least one role`}},
		{"bad role name", "[defaults]\nroles = [\"owner\", \"Big Boss\"]\n",
			[]string{`defaults.roles: role "Big Boss" is not a lower-case name (a letter, then letters, digits, _ or -)`}},
		// The engine refuses a role that starts with a digit; a default
		// naming one would make every new quest fail.
		{"role starting with a digit", "[defaults]\nroles = [\"owner\", \"2nd\"]\n",
			[]string{`defaults.roles: role "2nd" is not a lower-case name (a letter, then letters, digits, _ or -)`}},
		{"role twice", "[defaults]\nroles = [\"owner\", \"owner\"]\n",
			[]string{`defaults.roles: "owner" is listed twice`}},
		{"team without owner", "[defaults]\nroles = [\"scout\"]\n",
			[]string{`defaults.roles: mode team needs the owner role: only the owner promotes the workers' proposals, so nothing would run after the first node (roles: scout); add owner, or use mode solo`}},
		{"team with only owner", "[defaults]\nroles = [\"owner\"]\n",
			[]string{`defaults.roles: mode team needs a role that can work besides owner (e.g. scout or poc): the owner decides, it never does the work (roles: owner)`}},
		{"solo with only owner", "[defaults]\nmode = \"solo\"\nroles = [\"owner\"]\n",
			[]string{`defaults.roles: mode solo needs a role that can work (e.g. scout or poc): owner is only dispatched in team mode (roles: owner)`}},

		// Validation: providers.
		{"provider without type", "[providers.llm]\nmodel = \"m\"\n",
			[]string{`providers.llm.type: missing; use command, openai, claude-code or codex`}},
		{"provider with empty type", "[providers.llm]\ntype = \"\"\n",
			[]string{`providers.llm.type: "" is not one of command, openai, claude-code, codex`}},
		{"command with empty argv", "[providers.agent]\ntype = \"command\"\nargv = []\n",
			[]string{`providers.agent.argv: empty; a command provider needs the command to run, e.g. argv = ["/usr/local/bin/agent", "--quiet"]`}},
		{"openai with empty base_url and model", "[providers.llm]\ntype = \"openai\"\nbase_url = \"\"\nmodel = \" \"\n",
			[]string{`providers.llm.base_url: "" is not an http:// or https:// URL`,
				`providers.llm.model: empty; an openai provider needs the model name`}},
		{"provider bad type", "[providers.llm]\ntype = \"claude\"\n",
			[]string{`providers.llm.type: "claude" is not one of command, openai, claude-code, codex`}},
		{"command without argv", "[providers.agent]\ntype = \"command\"\n",
			[]string{`providers.agent.argv: missing; a command provider needs the command to run, e.g. argv = ["/usr/local/bin/agent", "--quiet"]`}},
		{"command with empty program", "[providers.agent]\ntype = \"command\"\nargv = [\"\", \"x\"]\n",
			[]string{`providers.agent.argv: the program (first element) is empty`}},
		{"command with bad env name", "[providers.agent]\ntype = \"command\"\nargv = [\"a\"]\nenv = [\"PATH\", \"MY VAR\"]\n",
			[]string{`providers.agent.env: "MY VAR" is not an environment variable name`}},
		{"command with openai keys", "[providers.agent]\ntype = \"command\"\nargv = [\"a\"]\nmodel = \"m\"\nmax_tokens = 5\n",
			[]string{`providers.agent.model: only applies to openai providers, and this one is type = "command"`,
				`providers.agent.max_tokens: only applies to openai providers, and this one is type = "command"`}},
		{"openai without base_url and model", "[providers.llm]\ntype = \"openai\"\n",
			[]string{`providers.llm.base_url: missing; an openai provider needs the endpoint, e.g. base_url = "http://127.0.0.1:8081/v1"`,
				`providers.llm.model: missing; an openai provider needs the model name`}},
		{"openai bad base_url", "[providers.llm]\ntype = \"openai\"\nbase_url = \"127.0.0.1:8081\"\nmodel = \"m\"\n",
			[]string{`providers.llm.base_url: "127.0.0.1:8081" is not an http:// or https:// URL`}},
		{"openai key in api_key_env", "[providers.llm]\ntype = \"openai\"\nbase_url = \"https://x/v1\"\nmodel = \"m\"\napi_key_env = \"sk-123\"\n",
			[]string{`providers.llm.api_key_env: "sk-123" is not an environment variable name (it names the variable, not the key)`}},
		{"openai with command keys", "[providers.llm]\ntype = \"openai\"\nbase_url = \"https://x/v1\"\nmodel = \"m\"\nargv = [\"x\"]\n",
			[]string{`providers.llm.argv: only applies to command providers, and this one is type = "openai"`}},
		{"openai negative max_tokens", "[providers.llm]\ntype = \"openai\"\nbase_url = \"https://x/v1\"\nmodel = \"m\"\nmax_tokens = -1\n",
			[]string{`providers.llm.max_tokens: -1 is negative; the minimum is 0`}},
		{"provider zero timeout and cap", "[providers.agent]\ntype = \"command\"\nargv = [\"a\"]\ntimeout = \"0s\"\noutput_cap = 0\n",
			[]string{`providers.agent.timeout: must be longer than 0s`,
				`providers.agent.output_cap: 0 must be more than 0 bytes`}},
		{"reserved provider name demo", "[providers.demo]\ntype = \"command\"\nargv = [\"a\"]\n",
			[]string{`providers.demo: "demo" is reserved for the built-in provider; choose another name`}},
		{"reserved provider name external", "[providers.external]\ntype = \"command\"\nargv = [\"a\"]\n",
			[]string{`providers.external: "external" is reserved for the built-in provider; choose another name`}},
		{"bad provider name", "[providers.\"My LLM\"]\ntype = \"command\"\nargv = [\"a\"]\n",
			[]string{`providers."My LLM": provider name "My LLM" must match [a-z0-9_-]+`}},
		{"providers sorted by name", "[providers.b]\ntype = \"x\"\n[providers.a]\ntype = \"y\"\n",
			[]string{`providers.a.type: "y" is not one of command, openai, claude-code, codex`, `providers.b.type: "x" is not one of command, openai, claude-code, codex`}},

		// Validation: gpio.
		{"bad backend", "[gpio]\nbackend = \"wiringpi\"\n",
			[]string{`gpio.backend: "wiringpi" is not one of auto, sim, periph`}},
		{"pin out of range", "[gpio]\ngreen = 28\nbutton = -2\n",
			[]string{`gpio.green: 28 is not a header GPIO (BCM 2..27, or -1 if nothing is fitted)`,
				`gpio.button: -2 is not a header GPIO (BCM 2..27, or -1 if nothing is fitted)`}},
		{"eeprom pins", "[gpio]\ngreen = 0\nred = 1\n",
			[]string{`gpio.green: BCM 0 is reserved for the HAT ID EEPROM; use 2..27, or -1 if nothing is fitted`,
				`gpio.red: BCM 1 is reserved for the HAT ID EEPROM; use 2..27, or -1 if nothing is fitted`}},
		{"bad button pull", "[gpio]\nbutton_pull = \"pullup\"\n",
			[]string{`gpio.button_pull: "pullup" is not one of up, down, none (or "" for the default of the active level)`}},
		{"two functions on one pin", "[gpio]\nbutton = 17\n",
			[]string{`gpio.button: BCM 17 is already gpio.green; each function needs its own pin`}},
		{"long press not longer than debounce", "[gpio]\ndebounce = \"2s\"\nlong_press = \"1s\"\nmulti_press_gap = \"3s\"\n",
			[]string{`gpio.long_press: 1s must be longer than gpio.debounce (2s)`}},
		{"negative gpio durations", "[gpio]\ndebounce = \"-1ms\"\nconsent_expiry = \"-1m\"\n",
			[]string{`gpio.debounce: -1ms is negative`, `gpio.consent_expiry: -1m is negative`}},

		// Validation: mqtt.
		{"bad broker", "[mqtt]\nbroker = \"192.168.1.2:1883\"\n",
			[]string{`mqtt.broker: "192.168.1.2:1883" is not a broker URL (e.g. tcp://192.168.1.2:1883 or ssl://broker:8883)`}},
		{"cert without key", "[mqtt]\nbroker = \"ssl://b:8883\"\ncert_file = \"/c\"\n",
			[]string{`mqtt.cert_file: cert_file and key_file go together; set both or neither`}},
		{"bad topic prefix", "[mqtt]\ntopic_prefix = \"a/#\"\n",
			[]string{`mqtt.topic_prefix: "a/#" is not a topic prefix (non-empty, no + or #, no leading or trailing /)`}},
		{"consent without commands", "[mqtt]\ncommands_consent = true\n",
			[]string{`mqtt.commands_consent: needs mqtt.commands = true`}},
		{"connection settings without a broker", "[mqtt]\nusername = \"qb\"\npassword_file = \"/p\"\n",
			[]string{`mqtt.broker: missing, but mqtt.username is set: MQTT stays off without a broker URL (e.g. tcp://192.168.1.2:1883 or ssl://broker:8883); set one, or remove the MQTT connection settings`}},
		{"tls settings with an empty broker", "[mqtt]\nbroker = \"\"\nca_file = \"/ca.pem\"\n",
			[]string{`mqtt.broker: empty, but mqtt.ca_file is set: MQTT stays off without a broker URL (e.g. tcp://192.168.1.2:1883 or ssl://broker:8883); set one, or remove the MQTT connection settings`}},
		{"tls files on a plain broker", "[mqtt]\nbroker = \"tcp://b:1883\"\nca_file = \"/ca.pem\"\nserver_name = \"b.lan\"\n",
			[]string{`mqtt.ca_file: is set, but mqtt.broker "tcp://b:1883" does not use TLS (use ssl://, mqtts:// or wss://)`,
				`mqtt.server_name: is set, but mqtt.broker "tcp://b:1883" does not use TLS (use ssl://, mqtts:// or wss://)`}},
		{"password twice", "[mqtt]\nbroker = \"tcp://b:1883\"\nusername = \"u\"\npassword = \"p\"\npassword_file = \"/p\"\n",
			[]string{`mqtt.password: set password or password_file, not both`}},
		{"password without user", "[mqtt]\nbroker = \"tcp://b:1883\"\npassword = \"p\"\n",
			[]string{`mqtt.username: is empty, but a password is set (MQTT 3.1.1 sends a password only with a user name)`}},
		{"credentials in the broker url", "[mqtt]\nbroker = \"tcp://u:secret@b:1883\"\n",
			[]string{`mqtt.broker: "tcp://u:xxxxx@b:1883" carries credentials; use mqtt.username and mqtt.password_file`}},
		{"outbox below retention", "[mqtt]\noutbox_max = 50\n",
			[]string{`mqtt.outbox_max: 50 must be at least daemon.event_retention (10000): the bound drops only events older than the retention window`}},
		{"reconnect too fast", "[mqtt]\nreconnect_max = \"10ms\"\n",
			[]string{`mqtt.reconnect_max: 10ms is below the minimum 1s`}},

		// Everything at once: all validation errors, in section order.
		{"all validation errors reported", `
[daemon]
max_parallel = 0
[defaults]
mode = "duo"
provider = "nope"
checkpoints = ["reviewer"]
[providers.llm]
type = "openai"
[gpio]
red = 17
`, []string{
			`daemon.max_parallel: 0 is below the minimum 1`,
			`defaults.mode: "duo" is not one of team, solo`,
			`defaults.provider: "nope" is not a provider (built in: demo, external; configured: llm)`,
			`defaults.checkpoints: "reviewer" is not one of the roles (scout, poc, strategist, owner)`,
			`providers.llm.base_url: missing; an openai provider needs the endpoint, e.g. base_url = "http://127.0.0.1:8081/v1"`,
			`providers.llm.model: missing; an openai provider needs the model name`,
			`gpio.red: BCM 17 is already gpio.green; each function needs its own pin`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(tc.file), "questbox.toml")
			if err == nil {
				t.Fatalf("Parse succeeded (%+v), want errors %q", c, tc.want)
			}
			if c != nil {
				t.Errorf("Parse returned a config with an error")
			}
			var got []string
			for _, e := range problemsOf(t, err) {
				if e.File != "questbox.toml" {
					t.Errorf("error %q: File = %q, want questbox.toml", e, e.File)
				}
				if e.Key == "" {
					t.Errorf("error %q names no key", e)
				}
				got = append(got, e.Msg)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("errors:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestSyntaxErrorPosition(t *testing.T) {
	for _, tc := range []struct {
		name      string
		file      string
		line, col int
		prefix    string
	}{
		// Columns count runes and point where the toml package's error span
		// starts (for "1 2" that is the blank before the 2).
		{"unclosed table", "[daemon]\ntick = \"5s\"\n[gpio\ngreen = 1\n", 3, 6, "questbox.toml:3:6: "},
		{"two values", "[daemon]\nmax_parallel = 1 2\n", 2, 17, "questbox.toml:2:17: "},
		{"after multibyte", "# é\n[daemon]\ndata = \"é\" x\n", 3, 11, "questbox.toml:3:11: "},
		{"unexpected EOF", "a = [1,", 1, 7, "questbox.toml:1:7: "},
		{"missing value", "[daemon]\nmax_parallel =\n", 2, 15, "questbox.toml:2:15: "},
		{"duplicate key", "[daemon]\ntick = \"5s\"\ntick = \"6s\"\n", 3, 1, "questbox.toml:3:1: "},
		{"unterminated string", "[daemon]\n\n\nlisten = \"x\n", 4, 12, "questbox.toml:4:12: daemon.listen: strings cannot contain newlines"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.file), "questbox.toml")
			ps := problemsOf(t, err)
			if len(ps) != 1 {
				t.Fatalf("got %d errors, want 1: %v", len(ps), err)
			}
			e := ps[0]
			if e.Line != tc.line || e.Col != tc.col {
				t.Errorf("position = %d:%d, want %d:%d (%v)", e.Line, e.Col, tc.line, tc.col, e)
			}
			if !strings.HasPrefix(e.Error(), tc.prefix) {
				t.Errorf("Error() = %q, want prefix %q", e.Error(), tc.prefix)
			}
		})
	}
}

func TestValidateWithoutFile(t *testing.T) {
	c := Default()
	c.Daemon.Tick = Duration{0}
	c.Providers["x"] = Provider{Type: "command"}
	ps := problemsOf(t, c.Validate())
	var got []string
	for _, e := range ps {
		got = append(got, e.Error())
	}
	want := []string{
		"daemon.tick: 0s is below the minimum 1s",
		`providers.x.argv: missing; a command provider needs the command to run, e.g. argv = ["/usr/local/bin/agent", "--quiet"]`,
		"providers.x.timeout: must be longer than 0s",
		"providers.x.output_cap: 0 must be more than 0 bytes",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "questbox.toml")
	if err := os.WriteFile(path, []byte("[daemon]\ntick = \"5s\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if c.Path != path || c.Daemon.Tick.Duration != 5*time.Second {
		t.Errorf("got Path %q tick %v, want %q 5s", c.Path, c.Daemon.Tick, path)
	}

	_, err = Load(filepath.Join(dir, "missing.toml"))
	if !errors.Is(err, ErrInvalid) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load(missing) = %v, want ErrInvalid and fs.ErrNotExist", err)
	}

	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, []byte("[daemon]\ntik = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Load(bad)
	if want := bad + ":2: unknown key daemon.tik (did you mean daemon.tick?)"; err == nil || err.Error() != want {
		t.Errorf("Load(bad) = %v, want %q", err, want)
	}
}

func TestSocketPath(t *testing.T) {
	for _, tc := range []struct {
		name, data, socket, want string
	}{
		{"derived", "/var/lib/questbox", "", "/var/lib/questbox/questbox.sock"},
		{"relative data", "./data", "", "data/questbox.sock"},
		{"explicit", "/var/lib/questbox", "/run/questbox/ctl.sock", "/run/questbox/ctl.sock"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			c.Daemon.Data, c.Daemon.Socket = tc.data, tc.socket
			if got := c.SocketPath(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSanitizeID(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"raspberrypi", "raspberrypi"},
		{"Kitchen-Pi", "kitchen-pi"},
		{"questbox.local", "questbox-local"},
		{"box_1", "box_1"},
		{"..", "questbox"},
		{"", "questbox"},
	} {
		if got := sanitizeID(tc.in); got != tc.want {
			t.Errorf("sanitizeID(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"tick", "tick", 0},
		{"tik", "tick", 1},
		{"deamon", "daemon", 1},
		{"max_tires", "max_tries", 1},
		{"", "abc", 3},
		{"kitten", "sitting", 3},
	} {
		if got := distance(tc.a, tc.b); got != tc.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
