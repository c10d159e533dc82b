package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/questbox/questbox/gates"
	"github.com/questbox/questbox/gates/judge"
)

// providersTOML configures a command and an openai provider for judge tests.
const providersTOML = `
[providers.cli]
type = "command"
argv = ["judge"]
[providers.llm]
type = "openai"
base_url = "http://127.0.0.1:8081/v1"
model = "m"
`

func TestParseGatesJudgeNetwork(t *testing.T) {
	for _, tc := range []struct {
		name  string
		file  string
		check func(t *testing.T, c *Config)
	}{
		{"array of tables with params and edges", `
[defaults]
gate = "research"
[[gates.research.rules]]
id = "contract"
kind = "contract"
level = "fail"
[[gates.research.rules]]
id = "quotes"
kind = "citation-quote"
level = "fail"
supersedes = ["resolves"]
weight = 0.5
[[gates.research.rules]]
id = "resolves"
kind = "url-resolves"
level = "fail"
[[gates.research.rules]]
id = "no-todo"
kind = "regex"
level = "review"
params = { field = "evidence", pattern = "(?i)todo", mode = "must_not_match" }
weight = 1
`, func(t *testing.T, c *Config) {
			rules := c.Gates["research"].Rules
			if len(rules) != 4 || rules[1].Supersedes[0] != "resolves" || rules[1].Weight != 0.5 || rules[3].Weight != 1 ||
				rules[3].Params["pattern"] != "(?i)todo" {
				t.Fatalf("rules = %+v", rules)
			}
			if got := c.GateNames(); !reflect.DeepEqual(got, []string{"default", "research"}) {
				t.Errorf("GateNames() = %v, want [default research]", got)
			}
			cat, err := c.Catalog("research")
			if err != nil {
				t.Fatal(err)
			}
			d := cat.Describe()
			if len(d) != 4 || d[1].ID != "quotes" || d[1].Stage != gates.StageGround || !reflect.DeepEqual(d[1].Supersedes, []string{"resolves"}) {
				t.Errorf("Describe() = %+v", d)
			}
			if c.Defaults.Gate != "research" {
				t.Errorf("defaults.gate = %q", c.Defaults.Gate)
			}
		}},
		{"inline rules", `
gates.quick.rules = [
  { id = "contract", kind = "contract", level = "fail" },
  { id = "len", kind = "evidence-length", level = "review", params = { max = 500 } },
]
`, func(t *testing.T, c *Config) {
			if _, err := c.Catalog("quick"); err != nil || len(c.Gates["quick"].Rules) != 2 {
				t.Errorf("quick: %v, %+v", err, c.Gates["quick"])
			}
		}},
		{"default profile replaced", `
[[gates.default.rules]]
id = "contract"
kind = "contract"
level = "fail"
`, func(t *testing.T, c *Config) {
			cat, err := c.Catalog("default")
			if err != nil || len(cat.Describe()) != 1 {
				t.Errorf("default: %v, %+v", err, cat.Describe())
			}
			if got := c.GateNames(); !reflect.DeepEqual(got, []string{"default"}) {
				t.Errorf("GateNames() = %v", got)
			}
		}},
		{"judge", providersTOML + `
[judge]
light = { provider = "llm", model = "small" }
heavy = { provider = "cli", model = "big" }
template = "v1"
canaries = 2
canary_threshold = 1
`, func(t *testing.T, c *Config) {
			want := &judge.Config{Light: judge.TierConfig{Provider: "llm", Model: "small"}, Heavy: judge.TierConfig{Provider: "cli", Model: "big"},
				Template: "v1", Canaries: 2, CanaryThreshold: 1}
			if !reflect.DeepEqual(c.Judge, want) {
				t.Errorf("judge = %+v, want %+v", c.Judge, want)
			}
		}},
		{"network", `
[network]
probe = "127.0.0.1:9"
probe_ttl = "5s"
fetch_timeout = "3s"
max_body = "64KiB"
allow_private = true
`, func(t *testing.T, c *Config) {
			want := Network{Probe: "127.0.0.1:9", ProbeTTL: Duration{5 * time.Second}, FetchTimeout: Duration{3 * time.Second}, MaxBody: 64 * KiB, AllowPrivate: true}
			if c.Network != want {
				t.Errorf("network = %+v, want %+v", c.Network, want)
			}
		}},
		{"no probe", "[network]\nprobe = \"\"\n", func(t *testing.T, c *Config) {
			if c.Network.Probe != "" {
				t.Errorf("probe = %q", c.Network.Probe)
			}
		}},
		{"pins not fitted, button pull", `
[gpio]
green = -1
amber = -1
red = 2
button_pull = "none"
`, func(t *testing.T, c *Config) {
			if c.GPIO.Green != -1 || c.GPIO.Amber != -1 || c.GPIO.Red != 2 || c.GPIO.ButtonPull != "none" {
				t.Errorf("gpio = %+v", c.GPIO)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(tc.file), "questbox.toml")
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			tc.check(t, c)
		})
	}
}

func TestParseGatesJudgeNetworkErrors(t *testing.T) {
	const contract = `{ id = "contract", kind = "contract", level = "fail" }`
	for _, tc := range []struct {
		name string
		file string
		want []string
	}{
		// gates: shape.
		{"unknown rule key", "[[gates.g.rules]]\nid = \"c\"\nknd = \"contract\"\nlevel = \"fail\"\n",
			[]string{`unknown key gates.g.rules[0].knd (did you mean gates.g.rules[0].kind?)`}},
		{"unknown rule key inline, second rule", "gates.g.rules = [" + contract + `, { id = "x", kind = "contract", levl = "fail" }]` + "\n",
			[]string{`unknown key gates.g.rules[1].levl (did you mean gates.g.rules[1].level?)`}},
		{"rule field of the wrong type", "gates.g.rules = [{ id = 1, kind = \"contract\", level = \"fail\", attacks = \"x\" }]\n",
			[]string{`gates.g.rules[0].id: 1 is an integer, want a string`, `gates.g.rules[0].attacks: "x" is a string, want an array`}},
		{"rule not a table", "gates.g.rules = [\"contract\"]\n",
			[]string{`gates.g.rules[0]: "contract" is a string, want a table`}},
		{"rules not an array", "[gates.g]\nrules = \"contract\"\n",
			[]string{`gates.g.rules: "contract" is a string, want an array of tables`}},
		{"unknown profile key", "[gates.g]\nrule = []\n",
			[]string{`unknown key gates.g.rule (did you mean gates.g.rules?)`}},
		{"weight not a number", "gates.g.rules = [{ id = \"c\", kind = \"contract\", level = \"fail\", weight = \"high\" }]\n",
			[]string{`gates.g.rules[0].weight: "high" is a string, want a number`}},

		// gates: catalog validation.
		{"empty profile", "[gates.g]\nrules = []\n",
			[]string{`gates.g.rules: empty; a gate profile needs at least one rule (kinds: contract, evidence-length, fresh-directions, citations-present, citation-quote, url-resolves, mx-resolves, program, dates, regex, limits)`}},
		{"profile without rules", "[gates.g]\n",
			[]string{`gates.g.rules: missing; a gate profile needs at least one rule (kinds: contract, evidence-length, fresh-directions, citations-present, citation-quote, url-resolves, mx-resolves, program, dates, regex, limits)`}},
		{"bad profile name", "[gates.\"Strict Gate\"]\nrules = [" + contract + "]\n",
			[]string{`gates."Strict Gate": profile name "Strict Gate" must match [a-z0-9_-]+`}},
		{"unknown kind", "gates.g.rules = [" + contract + `, { id = "q", kind = "quote", level = "fail" }]` + "\n",
			[]string{`gates.g.rules[1]: rule "q": kind "quote" (known: contract, evidence-length, fresh-directions, citations-present, citation-quote, url-resolves, mx-resolves, program, dates, regex, limits): unknown rule kind`}},
		{"unknown level", "gates.g.rules = [{ id = \"c\", kind = \"contract\", level = \"warn\" }]\n",
			[]string{`gates.g.rules[0]: rule "c": gates: unknown level "warn" (want fail or review): invalid level`}},
		{"missing parameter", "gates.g.rules = [{ id = \"r\", kind = \"regex\", level = \"fail\", params = { field = \"evidence\" } }]\n",
			[]string{`gates.g.rules[0]: rule "r" (regex): parameter pattern is required: invalid rule configuration`}},
		{"unknown parameter", "gates.g.rules = [{ id = \"l\", kind = \"evidence-length\", level = \"fail\", params = { max = 10, maxx = 5 } }]\n",
			[]string{`gates.g.rules[0]: rule "l" (evidence-length): unknown parameter(s) maxx: invalid rule configuration`}},
		{"missing id", "gates.g.rules = [{ kind = \"contract\", level = \"fail\" }]\n",
			[]string{`gates.g.rules[0].id: missing; every rule needs an id: verdicts, facts and edges name it`}},
		{"empty id", "gates.g.rules = [{ id = \"\", kind = \"contract\", level = \"fail\" }]\n",
			[]string{`gates.g.rules[0]: rule #0 has id "": invalid rule`}},
		{"missing kind and level, second rule", "[[gates.g.rules]]\nid = \"c\"\nkind = \"contract\"\nlevel = \"fail\"\n[[gates.g.rules]]\nid = \"d\"\n",
			[]string{`gates.g.rules[1].kind: missing; one of contract, evidence-length, fresh-directions, citations-present, citation-quote, url-resolves, mx-resolves, program, dates, regex, limits`,
				`gates.g.rules[1].level: missing; "fail" or "review"`}},
		{"duplicate id", "gates.g.rules = [" + contract + ", " + contract + "]\n",
			[]string{`gates.g.rules[1].id: "contract" is already the id of rules[0]; each rule needs its own id`}},
		{"edge to an unknown rule", "gates.g.rules = [{ id = \"c\", kind = \"contract\", level = \"fail\", supersedes = [\"quotes\"] }]\n",
			[]string{`gates.g.rules[0].supersedes: "quotes" is not a rule of this profile (rules: c)`}},
		{"self edge", "gates.g.rules = [{ id = \"c\", kind = \"contract\", level = \"fail\", attacks = [\"c\"] }]\n",
			[]string{`gates.g.rules[0].attacks: rule "c" names itself`}},
		{"bad weight", "gates.g.rules = [{ id = \"c\", kind = \"contract\", level = \"fail\", weight = 2.0 }]\n",
			[]string{`gates.g.rules[0]: graph: rule "c" has weight 2 (want 0 < w <= 1): invalid defeat graph`}},
		{"supersedes cycle", `gates.g.rules = [
  { id = "a", kind = "contract", level = "fail", supersedes = ["b"] },
  { id = "b", kind = "fresh-directions", level = "fail", supersedes = ["a"] },
]
`, []string{`gates.g.rules: graph: supersedes cycle through "a": invalid defeat graph`}},
		{"unknown default gate", "[defaults]\ngate = \"strict\"\n",
			[]string{`defaults.gate: "strict" is not a gate profile (default)`}},

		// judge.
		{"judge incomplete", providersTOML + "[judge]\nlight = { provider = \"llm\", model = \"m\" }\nheavy = { provider = \"cli\" }\ntemplate = \"v1\"\ncanaries = 1\ncanary_threshold = 0\n",
			[]string{`judge.heavy.model: missing; the model name is part of the judge's cache fingerprint`}},
		{"judge empty table", "[judge]\n",
			[]string{`judge.light.provider: missing; name a provider configured under [providers]`,
				`judge.light.model: missing; the model name is part of the judge's cache fingerprint`,
				`judge.heavy.provider: missing; name a provider configured under [providers]`,
				`judge.heavy.model: missing; the model name is part of the judge's cache fingerprint`,
				`judge.template: missing; use "v1"`,
				`judge.canaries: missing; how many known-bad pairs to mix into every batch of fresh work (at least 1), e.g. canaries = 2`,
				`judge.canary_threshold: missing; how many canaries a judge may miss before its batch escalates (0 up to judge.canaries - 1), e.g. canary_threshold = 0`}},
		{"judge without canary_threshold", providersTOML + "[judge]\nlight = { provider = \"llm\", model = \"m\" }\nheavy = { provider = \"cli\", model = \"m\" }\ntemplate = \"v1\"\ncanaries = 2\n",
			[]string{`judge.canary_threshold: missing; how many canaries a judge may miss before its batch escalates (0 up to judge.canaries - 1), e.g. canary_threshold = 0`}},
		{"judge without canaries", providersTOML + "[judge]\nlight = { provider = \"llm\", model = \"m\" }\nheavy = { provider = \"cli\", model = \"m\" }\ntemplate = \"v1\"\ncanary_threshold = 0\n",
			[]string{`judge.canaries: missing; how many known-bad pairs to mix into every batch of fresh work (at least 1), e.g. canaries = 2`}},
		{"judge with empty strings", providersTOML + "[judge]\nlight = { provider = \"\", model = \"m\" }\nheavy = { provider = \"cli\", model = \" \" }\ntemplate = \"\"\ncanaries = 1\ncanary_threshold = 0\n",
			[]string{`judge.light.provider: empty; name a provider configured under [providers]`,
				`judge.heavy.model: empty; the model name is part of the judge's cache fingerprint`,
				`judge.template: empty; use "v1"`}},
		{"judge without a tier", providersTOML + "[judge]\nlight = { provider = \"llm\", model = \"m\" }\ntemplate = \"v1\"\ncanaries = 1\ncanary_threshold = 0\n",
			[]string{`judge.heavy.provider: missing; name a provider configured under [providers]`,
				`judge.heavy.model: missing; the model name is part of the judge's cache fingerprint`}},
		{"judge provider not configured", providersTOML + "[judge]\nlight = { provider = \"demo\", model = \"m\" }\nheavy = { provider = \"gpt\", model = \"m\" }\ntemplate = \"v1\"\ncanaries = 1\ncanary_threshold = 0\n",
			[]string{`judge.light.provider: "demo" is not a configured provider (configured: cli, llm); demo and external cannot judge`,
				`judge.heavy.provider: "gpt" is not a configured provider (configured: cli, llm); demo and external cannot judge`}},
		{"judge bad template and threshold", providersTOML + "[judge]\nlight = { provider = \"llm\", model = \"m\" }\nheavy = { provider = \"cli\", model = \"m\" }\ntemplate = \"v9\"\ncanaries = 2\ncanary_threshold = 2\n",
			[]string{`judge.template: "v9" is not a known prompt template (known: v1)`,
				`judge.canary_threshold: 2 must be at least 0 and below judge.canaries (2)`}},
		{"judge unknown key", "[providers.llm]\ntype = \"command\"\nargv = [\"/bin/true\"]\n[judge]\nlight = { provider = \"llm\", modle = \"m\" }\nheavy = { provider = \"llm\", model = \"m\" }\ntemplate = \"v1\"\ncanaries = 2\ncanary_threshold = 0\n",
			[]string{`unknown key judge.light.modle (did you mean judge.light.model?)`}},

		// network.
		{"bad probe", "[network]\nprobe = \"1.1.1.1\"\n",
			[]string{`network.probe: "1.1.1.1" is not host:port with a port in 1..65535 (e.g. "1.1.1.1:53"), or "" for no probe`}},
		{"probe port 0", "[network]\nprobe = \"1.1.1.1:0\"\n",
			[]string{`network.probe: "1.1.1.1:0" is not host:port with a port in 1..65535 (e.g. "1.1.1.1:53"), or "" for no probe`}},
		{"network bounds", "[network]\nprobe_ttl = \"100ms\"\nfetch_timeout = \"0s\"\nmax_body = 0\n",
			[]string{`network.probe_ttl: 100ms is below the minimum 1s`,
				`network.fetch_timeout: must be longer than 0s`,
				`network.max_body: 0 must be more than 0 bytes`}},
		{"allow_private not a bool", "[network]\nallow_private = \"yes\"\n",
			[]string{`network.allow_private: "yes" is a string, want a boolean (true or false)`}},

		// logs.
		{"a run's log too small", "[logs]\nper_run = \"1KiB\"\n",
			[]string{`logs.per_run: 1KiB is below the minimum 4KiB`}},
		{"total below the runs in flight", "[daemon]\nmax_parallel = 4\n[logs]\nper_run = \"1MiB\"\ntotal = \"3MiB\"\n",
			[]string{`logs.total: 3MiB is below logs.per_run × daemon.max_parallel (1MiB × 4 = 4MiB): every run in flight reserves logs.per_run`}},
		{"logs misspelt", "[logs]\nper_rn = \"1MiB\"\n",
			[]string{`unknown key logs.per_rn (did you mean logs.per_run?)`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(tc.file), "questbox.toml")
			if err == nil {
				t.Fatalf("Parse succeeded (%+v), want errors %q", c, tc.want)
			}
			var got []string
			for _, e := range problemsOf(t, err) {
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

func TestCatalogUnknownGate(t *testing.T) {
	c := Default()
	if _, err := c.Catalog("default"); err != nil {
		t.Fatalf("Catalog(default) = %v", err)
	}
	_, err := c.Catalog("strict")
	if !errors.Is(err, ErrUnknownGate) || !strings.Contains(err.Error(), `"strict"`) || !strings.Contains(err.Error(), "known: default") {
		t.Errorf("Catalog(strict) = %v, want ErrUnknownGate naming the profile and the known ones", err)
	}
}
