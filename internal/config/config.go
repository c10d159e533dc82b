// Package config is the daemon's configuration file: the daemon itself, the
// defaults every new quest starts from, the named agent providers, the gate
// profiles (rule catalogs), the optional L2 judge, the network probe and
// ground limits, the GPIO wiring of LEDs and button, and the optional MQTT
// presence.
//
// The file is TOML (systemd/questbox.toml is the documented default, installed as
// /etc/questbox/questbox.toml). Loading is fail-closed: [Load] and [Parse] start
// from [Default], lay the file over it, and then [Config.Validate] the result.
// Any problem — a TOML syntax error, an unknown key, a value of the wrong type or
// outside its range, a required key an optional table leaves out, a reference to
// a provider or role that does not exist, quest defaults no quest could make
// progress with (domain.CheckRoles) — is an error that names the file, the line,
// the full dotted key and the offending value, and every problem in the file is
// reported at once, not only the first. All such errors wrap [ErrInvalid]; each
// one is an [*Error].
//
// The toml package decides what is a key and what is of the wrong type
// (toml.MetaData.Undecoded, its decode errors); a schema derived once from the
// toml tags, by encoding a sample Config, words the messages. No code here
// walks the Config struct.
//
// A Config is a plain value: it does no I/O after loading and is safe to read
// from many goroutines as long as nobody writes to it.
package config

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/questbox/questbox/device"
	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/gates"
	"github.com/questbox/questbox/gates/judge"
)

// DefaultPath is where the daemon looks for its configuration file when no
// --config flag is given (systemd's ConfigurationDirectory=questbox).
const DefaultPath = "/etc/questbox/questbox.toml"

// Names of the providers that exist without any configuration
// (docs/design.md, "Providers and the worker's answer"). A configured
// provider may not take either name.
const (
	ProviderDemo     = engine.ProviderDemo     // built in, deterministic, offline; for `make run`
	ProviderExternal = engine.ProviderExternal // nothing is spawned; an outside agent uses next/submit
)

// Quest modes (docs/design.md, "Solo and team modes").
const (
	ModeTeam = engine.ModeTeam
	ModeSolo = engine.ModeSolo
)

// Provider types (docs/design.md, "Providers and the worker's answer") for
// configured providers.
const (
	TypeCommand = "command"
	TypeOpenAI  = "openai"
)

// DefaultGate is the name of the built-in gate profile (gates.DefaultCatalog).
// A [gates.NAME] table with this name replaces it.
const DefaultGate = engine.DefaultGate

// NotFitted is the pin number of an LED or button that is not fitted.
const NotFitted = -1

// Button pulls (gpio.button_pull).
const (
	PullUp   = "up"
	PullDown = "down"
	PullNone = "none"
)

// GPIO backends (docs/design.md, "Device backends").
const (
	BackendAuto   = device.BackendAuto
	BackendSim    = device.BackendSim
	BackendPeriph = device.BackendPeriph
)

// Config is the whole configuration file.
type Config struct {
	Daemon    Daemon              `toml:"daemon"`
	Defaults  QuestDefaults       `toml:"defaults"`
	Providers map[string]Provider `toml:"providers"`
	// Gates are the configured gate profiles by name ([gates.NAME]); the
	// built-in "default" exists without an entry (see [Config.GateNames]).
	Gates map[string]GateProfile `toml:"gates"`
	// Judge configures the L2 AI judge (docs/design.md, "Judge discipline").
	// nil (no [judge] table) means no L2 judge; a [judge] table must be
	// complete.
	Judge   *judge.Config `toml:"judge"`
	Network Network       `toml:"network"`
	GPIO    GPIO          `toml:"gpio"`
	MQTT    MQTT          `toml:"mqtt"`
	// Dashboard is the web dashboard on Daemon.Listen (see dashboard.go).
	Dashboard Dashboard `toml:"dashboard"`
	// Logs bounds the agent runs' logs under <data>/logs (see [Logs]).
	Logs Logs `toml:"logs"`
	// Council names the providers of council members (see council.go).
	Council Council `toml:"council"`
	// Roles configure roles by name ([roles.NAME], see roles.go): each
	// role's provider, prompt template, max_tries (and the owner's
	// evidence cap). None by default: every role uses the quest's
	// provider and the built-in prompt.
	Roles map[string]Role `toml:"roles"`
	// Privacy is what leaves the box ([privacy], see roles.go).
	Privacy Privacy `toml:"privacy"`
	// Teams are the accept criteria per team_kind ([teams.KIND], see
	// teams.go).
	Teams map[string]Team `toml:"teams"`
	// Backup schedules backups of the store (see backup.go).
	Backup Backup `toml:"backup"`

	// Path is the file the config was loaded from, or the name given to
	// [Parse]; "" means built-in defaults. Errors are prefixed with it.
	Path string `toml:"-"`
}

// Daemon configures the daemon process itself.
type Daemon struct {
	// Data is the data directory (store, control socket). Default
	// "/var/lib/questbox" (systemd's StateDirectory=questbox).
	Data string `toml:"data"`
	// Tick is the scheduler period (docs/design.md, "The tick"). Default 60s;
	// at least 1s.
	Tick Duration `toml:"tick"`
	// MaxParallel caps agent runs in flight across quests. Default 2; at least 1.
	MaxParallel int `toml:"max_parallel"`
	// Listen is the dashboard's host:port. Default "127.0.0.1:8080": only the
	// box itself until the owner opens it up, e.g. ":8080".
	Listen string `toml:"listen"`
	// DeviceID names this box in MQTT topics (questbox/<device_id>).
	// Default: the hostname, lower-cased, with every character outside
	// [a-z0-9_-] replaced by '-'. Must match [a-z0-9_-]+.
	DeviceID string `toml:"device_id"`
	// Socket is the control socket's path; "" means <data>/questbox.sock
	// (see [Config.SocketPath]).
	Socket string `toml:"socket"`
	// Grace is how long runs may finish after SIGTERM (docs/design.md,
	// "Service, image and updates"). Default 30s.
	Grace Duration `toml:"grace"`
	// EventRetention is how many delivered events the outbox keeps (for the
	// dashboard's /api/events?since=, and MQTT and dashboard replay after a
	// reconnect). Default 10000; at least 100.
	EventRetention int `toml:"event_retention"`
	// MemoryLimit is the Go runtime's soft memory limit for the daemon
	// (runtime/debug.SetMemoryLimit): past it the garbage collector runs
	// more often, to keep the heap and the runtime's own memory under it.
	// It is set once the store is open and checked, and lifted while a
	// store is opened again (a restore), whose check and upgrade hold
	// more live heap than a busy tick. "off" sets none. A GOMEMLIMIT or
	// GOGC in the daemon's environment wins over it. A reload (SIGHUP)
	// applies a changed value. Default 24MiB ([DefaultMemoryLimit]); at
	// least 8MiB ([MinMemoryLimit]).
	MemoryLimit MemoryLimit `toml:"memory_limit"`
}

// DefaultMemoryLimit is daemon.memory_limit's default: a busy tick of
// 1,000 results on a 10,000-node store peaks under 40 MiB resident with it.
const DefaultMemoryLimit = MemoryLimit(24 * MiB)

// MinMemoryLimit is the least daemon.memory_limit: below it the runtime's
// own memory and an idle daemon's heap alone reach the limit, and the
// collector would run back to back.
const MinMemoryLimit = MemoryLimit(8 * MiB)

// Logs bounds the logs of agent runs (docs/design.md, "Runs and their logs"):
// one file per run under <data>/logs, holding the run's answer and a command
// provider's stderr. They are files, not store records, so that the store
// stays small and the SD card sees one fsync per run.
type Logs struct {
	// PerRun is the most bytes one run's log keeps: its first and last
	// halves, with the cut marked between them. Default 256KiB; at least
	// 4KiB.
	PerRun Size `toml:"per_run"`
	// Total is the most bytes all logs keep together; past it the oldest
	// runs' logs are deleted first. Every run in flight reserves PerRun of
	// it, so it must be at least PerRun times daemon.max_parallel. Default
	// 64MiB.
	Total Size `toml:"total"`
}

// QuestDefaults are what `quest new` uses for every flag it is not given.
type QuestDefaults struct {
	// Mode is "team" (default) or "solo" (docs/design.md, "Solo and team
	// modes").
	Mode string `toml:"mode"`
	// Provider names the agent provider: "demo" (default), "external", or the
	// name of a configured [Provider].
	Provider string `toml:"provider"`
	// MaxTries is how many FAILs a node may take before it is exhausted. Default 3.
	MaxTries int `toml:"max_tries"`
	// MaxAgentRuns caps agent runs per quest (docs/design.md, "Loop
	// control"). Default 50.
	MaxAgentRuns int `toml:"max_agent_runs"`
	// WallClock is the wall-clock budget per quest (docs/design.md, "Loop
	// control"). Default 24h.
	WallClock Duration `toml:"wall_clock"`
	// TokenBudget caps provider tokens per quest (docs/design.md, "Loop
	// control"). Default 1000000.
	TokenBudget int `toml:"token_budget"`
	// MaxStalled stops a quest after this many identical run signatures in a
	// row (docs/design.md, "Loop control"). Default 3.
	MaxStalled int `toml:"max_stalled"`
	// Roles are the roles a quest uses. Default scout, poc, strategist, owner.
	// They must let a quest of Mode make progress, by the engine's own rule
	// (domain.CheckRoles): team needs owner (nobody else promotes
	// proposals) and a role besides it, solo a role other than owner.
	Roles []string `toml:"roles"`
	// Checkpoints are roles whose passed nodes also need human consent (L3).
	// Each must be one of Roles. Default none.
	Checkpoints []string `toml:"checkpoints"`
	// OwnerEvery dispatches the owner in team mode once this many proposals
	// have accumulated. Default 3.
	OwnerEvery int `toml:"owner_every"`
	// Gate names the gate profile of new quests: "default" (the built-in
	// catalog, unless [gates.default] replaces it) or a [gates.NAME].
	Gate string `toml:"gate"`
}

// GateProfile is one gate profile: the rules of a catalog, in order, each a
// built-in rule kind with its level, parameters and defeat-graph edges
// (see gates.RuleSpec and gates.Kinds). Loading validates it with
// gates.LoadCatalog: an empty list, an unknown kind or level, a bad
// parameter, a duplicate id or an edge to an unknown rule stops start-up.
type GateProfile struct {
	Rules []gates.RuleSpec `toml:"rules"`
}

// Network configures how the box decides it is online and how the gate's
// ground stage reaches the network (docs/design.md, "Staged evaluation and
// ground").
type Network struct {
	// Probe is the host:port the box dials (TCP) to decide it is online.
	// Default "1.1.1.1:53" (Cloudflare DNS over TCP: answers everywhere,
	// costs one SYN/ACK). "" disables the probe: the box always believes
	// it is online, and only transport errors defer evaluations.
	Probe string `toml:"probe"`
	// ProbeTTL is how long a probe result is trusted. Default 30s; at least 1s.
	ProbeTTL Duration `toml:"probe_ttl"`
	// FetchTimeout bounds each ground request (a fetch with its redirects
	// and body, an MX lookup, a dial). Default 10s.
	FetchTimeout Duration `toml:"fetch_timeout"`
	// MaxBody is the most bytes of a fetched body the gate reads. Default 1MiB.
	MaxBody Size `toml:"max_body"`
	// AllowPrivate lets ground requests reach loopback, private and
	// link-local addresses. Default false, so that a cited URL cannot make
	// the box probe its own network or dashboard.
	AllowPrivate bool `toml:"allow_private"`
}

// Provider is one configured agent provider, referred to by its name (the key
// under [providers]). Names match [a-z0-9_-]+; "demo" and "external" are
// reserved for the built-in ones.
type Provider struct {
	// Type is "command", "openai", or an agent CLI preset: "claude-code"
	// or "codex" (a command provider whose argv, env, vendor and output
	// format are the CLI's; see presets.go).
	Type string `toml:"type"`

	// Argv is the command to run (command); the prompt goes to its stdin.
	// For claude-code and codex it is optional and replaces the preset's
	// command line.
	Argv []string `toml:"argv"`
	// Env is the allow-list of environment variable names passed through to
	// the command (command). Default PATH, HOME, LANG; an explicit empty list
	// passes nothing.
	Env []string `toml:"env"`
	// Dir is the command's working directory when the quest has no
	// project (command); "" is the quest's scratch directory. Runs never
	// write it (see Write).
	Dir string `toml:"dir"`
	// Write are more directories the command's runs may write (command),
	// besides the quest's project (or scratch) directory and their own
	// temporary one: e.g. the agent program's own state directory. Every
	// run of the provider shares them. Absolute paths, outside the data
	// directory; default none.
	Write []string `toml:"write"`

	// Timeout bounds one agent run (both types). Default 10m.
	Timeout Duration `toml:"timeout"`
	// OutputCap bounds the answer's size (both types). Default 1MiB.
	OutputCap Size `toml:"output_cap"`

	// BaseURL is the OpenAI-compatible endpoint, e.g.
	// "http://127.0.0.1:8081/v1" (openai).
	BaseURL string `toml:"base_url"`
	// Model is the model name sent to the endpoint (openai), or passed as
	// --model to a claude-code or codex preset's default command line.
	Model string `toml:"model"`
	// APIKeyEnv names the environment variable holding the API key (openai);
	// "" sends no key (local servers). The key itself never lives in the file.
	APIKeyEnv string `toml:"api_key_env"`
	// MaxTokens caps tokens per answer (openai); 0 leaves it to the server.
	MaxTokens int `toml:"max_tokens"`

	// Vendor names who receives the prompts (both types; docs/design.md,
	// "Privacy egress"): "local" for a program or server on the box or
	// the LAN, else the company or service ("anthropic", "openai"). ""
	// (default) makes the provider a vendor of its own, named like the
	// provider, and never local; a preset's default is its company
	// ("anthropic" for claude-code, "openai" for codex): see
	// [Config.VendorOf].
	Vendor string `toml:"vendor"`
}

// GPIO is the wiring of the status LEDs and the consent button
// (docs/design.md, "The box"), in BCM numbering.
type GPIO struct {
	// Backend is "auto" (default: periph when pins exist, else sim with a
	// warning), "sim" or "periph".
	Backend string `toml:"backend"`
	// Chip is the GPIO character device, e.g. "gpiochip0"; "" is the first.
	Chip string `toml:"chip"`

	// BCM 2..27, or -1 for "not fitted" (BCM 0 and 1 are the HAT ID
	// EEPROM's).
	Green  int `toml:"green"`  // default BCM 17
	Amber  int `toml:"amber"`  // default BCM 27
	Red    int `toml:"red"`    // default BCM 22
	Button int `toml:"button"` // default BCM 23

	// ActiveLow drives the LEDs active-low (sinking). Default false.
	ActiveLow bool `toml:"leds_active_low"`
	// ButtonActiveHigh reads the button as active-high with a pull-down.
	// Default false: pull-up, pressed pulls the pin low.
	ButtonActiveHigh bool `toml:"button_active_high"`
	// ButtonPull is the button pin's bias: "up", "down" or "none" (an
	// external resistor). "" (default) is up for an active-low button and
	// down for an active-high one.
	ButtonPull string `toml:"button_pull"`

	// Debounce is the button's debounce time. Default 50ms.
	Debounce Duration `toml:"debounce"`
	// LongPress is how long a press approves. Default 2s; longer than Debounce.
	LongPress Duration `toml:"long_press"`
	// MultiPressGap is the longest gap between the presses of a triple press.
	// Default 400ms.
	MultiPressGap Duration `toml:"multi_press_gap"`

	// ActLED mirrors the worst state on the Pi's own ACT LED
	// (/sys/class/leds/ACT) when no external LEDs are fitted. Default false.
	ActLED bool `toml:"act_led"`
	// ConsentExpiry expires a pending consent after this long; 0 (default)
	// means never.
	ConsentExpiry Duration `toml:"consent_expiry"`
}

// MQTT is the box's optional MQTT presence (docs/design.md, "MQTT"). It is
// off while Broker is "".
type MQTT struct {
	// Broker is the broker URL: tcp://host:1883, ssl://host:8883 (TLS; also
	// mqtts://, tls://), ws://host:9001 or wss:// (websocket), mqtt://
	// (plain). The protocol is MQTT 3.1.1. "" (default) disables MQTT.
	Broker string `toml:"broker"`
	// ClientID defaults to "questbox-<device_id>" when "". Two boxes with
	// one client id knock each other off the broker.
	ClientID string `toml:"client_id"`
	// Username is the user the box logs in to the broker as; "" for
	// none.
	Username string `toml:"username"`
	// Password is the password in the config file itself. Prefer
	// PasswordFile: the config file is world-readable on most systems. Set
	// at most one of them.
	Password string `toml:"password"`
	// PasswordFile holds the password (trailing newline ignored); keep it
	// readable by the questbox user only.
	PasswordFile string `toml:"password_file"`
	// CAFile, CertFile and KeyFile configure TLS: a custom CA (PEM) instead
	// of the system's, and a client certificate with its key (PEM, both or
	// neither). ServerName is the name the broker's certificate must carry
	// when it differs from the broker URL's host. They need a TLS broker URL
	// (ssl://, mqtts://, tls:// or wss://).
	CAFile     string `toml:"ca_file"`
	CertFile   string `toml:"cert_file"`
	KeyFile    string `toml:"key_file"`
	ServerName string `toml:"server_name"`
	// TopicPrefix is the first topic level; the base topic is
	// <topic_prefix>/<device_id> (see [Config.MQTTBase]). Default "questbox".
	TopicPrefix string `toml:"topic_prefix"`
	// Discovery publishes Home Assistant discovery. Default true; false
	// removes the entities this box published before.
	Discovery bool `toml:"discovery"`
	// DiscoveryPrefix is Home Assistant's discovery prefix. Default "homeassistant".
	DiscoveryPrefix string `toml:"discovery_prefix"`
	// Commands enables <base>/cmd/... (stop/resume a quest). Default false.
	// Retained commands are never acted on.
	Commands bool `toml:"commands"`
	// CommandsConsent lets MQTT commands grant consent (an L3 consent from
	// source "mqtt", bound to the claim hash the command names). Default
	// false: consent stays physical. Requires Commands.
	CommandsConsent bool `toml:"commands_consent"`
	// OutboxMax bounds the events that wait for the broker (an outage).
	// Past it the oldest undelivered node, quest and device events are
	// dropped — the retained quest state and summary still carry their
	// latest word — and verdict and consent events are kept whatever it
	// costs. Default 100000; at least daemon.event_retention.
	OutboxMax int `toml:"outbox_max"`
	// ReconnectMax caps the back-off between connection attempts (it
	// starts at 1s and doubles). Default 30s; at least 1s.
	ReconnectMax Duration `toml:"reconnect_max"`
}

// Enabled reports whether MQTT is configured.
func (m MQTT) Enabled() bool { return m.Broker != "" }

// Default returns a Config with every default filled in and no providers
// beyond the built-in ones. Each call returns a fresh value that the caller
// may modify. DeviceID comes from the hostname (see [Daemon]). The
// defaults of a rule another package owns are that package's: the quest
// defaults and the engine's bounds are the engine's, the pins and the
// button timing the device's.
func Default() *Config {
	q := engine.DefaultQuestDefaults()
	return &Config{
		Daemon: Daemon{
			Data:           "/var/lib/questbox",
			Tick:           Duration{60 * time.Second},
			MaxParallel:    engine.DefaultMaxParallel,
			Listen:         "127.0.0.1:8080",
			DeviceID:       defaultDeviceID(),
			Grace:          Duration{30 * time.Second},
			EventRetention: engine.DefaultEventRetention,
			MemoryLimit:    DefaultMemoryLimit,
		},
		Defaults: QuestDefaults{
			Mode:         q.Mode,
			Provider:     q.Provider,
			MaxTries:     q.Limits.MaxTries,
			MaxAgentRuns: q.Limits.MaxAgentRuns,
			WallClock:    Duration{q.Limits.WallClock},
			TokenBudget:  q.Limits.TokenBudget,
			MaxStalled:   q.Limits.MaxStalled,
			Roles:        q.Roles,
			Checkpoints:  q.Checkpoints,
			OwnerEvery:   q.Limits.OwnerEvery,
			Gate:         q.Gate,
		},
		Providers: map[string]Provider{},
		Gates:     map[string]GateProfile{},
		Logs:      Logs{PerRun: DefaultLogPerRun, Total: DefaultLogTotal},
		Network: Network{
			Probe:        "1.1.1.1:53",
			ProbeTTL:     Duration{30 * time.Second},
			FetchTimeout: Duration{10 * time.Second},
			MaxBody:      MiB,
		},
		GPIO: GPIO{
			Backend:       BackendAuto,
			Green:         device.DefaultGreenPin,
			Amber:         device.DefaultAmberPin,
			Red:           device.DefaultRedPin,
			Button:        device.DefaultButtonPin,
			Debounce:      Duration{device.DefaultDebounce},
			LongPress:     Duration{device.DefaultLongPress},
			MultiPressGap: Duration{device.DefaultMultiPressGap},
		},
		MQTT: MQTT{
			TopicPrefix:     "questbox",
			Discovery:       true,
			DiscoveryPrefix: "homeassistant",
			OutboxMax:       100000,
			ReconnectMax:    Duration{30 * time.Second},
		},
		Dashboard: defaultDashboard(),
		Roles:     map[string]Role{},
		Privacy:   Privacy{Redact: []string{}},
		Backup:    defaultBackup(),
	}
}

// defaultProvider fills what a configured provider gets when its keys are absent.
func defaultProvider() Provider {
	return Provider{
		Timeout:   Duration{10 * time.Minute},
		OutputCap: 1 << 20,
	}
}

// defaultEnv is the command provider's default environment allow-list.
func defaultEnv() []string { return []string{"PATH", "HOME", "LANG"} }

// defaultDeviceID derives a device id from the hostname; "questbox" if the
// hostname is unknown or has nothing usable in it.
func defaultDeviceID() string {
	h, err := os.Hostname()
	if err != nil {
		return "questbox"
	}
	return sanitizeID(h)
}

// sanitizeID lower-cases s and replaces each rune outside [a-z0-9_-] by '-'.
func sanitizeID(s string) string {
	s = strings.ToLower(s)
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	id := strings.Trim(b.String(), "-")
	if id == "" {
		return "questbox"
	}
	return id
}

// SocketPath is the control socket's path: Daemon.Socket, or
// <Daemon.Data>/questbox.sock when that is "".
func (c *Config) SocketPath() string {
	if c.Daemon.Socket != "" {
		return c.Daemon.Socket
	}
	return filepath.Join(c.Daemon.Data, "questbox.sock")
}

// HasProvider reports whether name is a built-in provider or one configured
// under [providers].
func (c *Config) HasProvider(name string) bool {
	if name == ProviderDemo || name == ProviderExternal {
		return true
	}
	_, ok := c.Providers[name]
	return ok
}

// MQTTBase is the base topic: <mqtt.topic_prefix>/<daemon.device_id>.
func (c *Config) MQTTBase() string {
	return c.MQTT.TopicPrefix + "/" + c.Daemon.DeviceID
}

// MQTTClientID is MQTT.ClientID, or "questbox-<device_id>" when that is "".
func (c *Config) MQTTClientID() string {
	if c.MQTT.ClientID != "" {
		return c.MQTT.ClientID
	}
	return "questbox-" + c.Daemon.DeviceID
}
