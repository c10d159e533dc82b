package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/gates/judge"
)

var (
	// idPattern is what device ids and provider names look like: they
	// end up in MQTT topics, URLs and file names.
	idPattern = regexp.MustCompile(`^[a-z0-9_-]+$`)
	// envPattern is a portable environment variable name.
	envPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// minEventRetention is the fewest delivered events the outbox keeps: a
// dashboard or MQTT client that reconnects replays from its last seq, and
// the engine would read 0 as its own default anyway.
const minEventRetention = 100

// maxSocketPath is the longest path a unix socket can bind on Linux
// (sizeof(sun_path) minus the terminating NUL).
const maxSocketPath = 107

// Validate checks every value of c and returns all problems found, joined,
// each an [*Error] wrapping [ErrInvalid] and naming its key; nil if c is
// usable. It does not touch the file system or the network.
//
// The required keys of an optional table (every key of [judge], a
// provider's type and what its type needs, a rule's id, kind and level)
// are missing when they are zero; [Parse] knows better, from the file, and
// also refuses a canary_threshold of 0 that the file leaves out.
func (c *Config) Validate() error {
	return errors.Join(c.validate(nil)...)
}

// validate is Validate; isSet, when not nil, reports whether the file
// writes a key (as errors name it).
func (c *Config) validate(isSet func(key string) bool) []error {
	p := &problems{file: c.Path, isSet: isSet}
	c.validateDaemon(p)
	c.validateDefaults(p)
	c.validateProviders(p)
	c.validateGates(p)
	c.validateTeams(p)
	c.validateJudge(p)
	c.Network.validate(p)
	c.GPIO.validate(p)
	c.MQTT.validate(p, c.Daemon.EventRetention)
	c.Dashboard.validate(p)
	c.Logs.validate(p, c.Daemon.MaxParallel)
	c.Council.validate(c, p)
	c.validateRoles(p)
	c.Privacy.validate(p)
	c.Backup.validate(p)
	// The messages quote values; none may carry a secret the config holds.
	return redactAll(newRedactor([]string{brokerPassword(c.MQTT.Broker), c.MQTT.Password}), p.errs)
}

// problems collects validation errors for one file.
type problems struct {
	file  string
	errs  []error
	isSet func(key string) bool // nil for a Config not parsed from a file
}

// set reports whether key is written in the file; for a Config not parsed
// from a file, whether its value is not the zero value (nonZero).
func (p *problems) set(key string, nonZero bool) bool {
	if p.isSet == nil {
		return nonZero
	}
	return p.isSet(key)
}

func (p *problems) add(key, format string, args ...any) {
	p.errs = append(p.errs, &Error{File: p.file, Key: key, Msg: key + ": " + fmt.Sprintf(format, args...)})
}

// atLeast checks an integer lower bound, saying "negative" when it is.
func (p *problems) atLeast(key string, v, minimum int) {
	switch {
	case v < 0 && minimum >= 0:
		p.add(key, "%d is negative; the minimum is %d", v, minimum)
	case v < minimum:
		p.add(key, "%d is below the minimum %d", v, minimum)
	}
}

// durationAtLeast checks a duration lower bound.
func (p *problems) durationAtLeast(key string, d Duration, minimum time.Duration) {
	switch {
	case d.Duration < 0:
		p.add(key, "%s is negative", d)
	case d.Duration < minimum && minimum == 1:
		p.add(key, "must be longer than 0s")
	case d.Duration < minimum:
		p.add(key, "%s is below the minimum %s", d, Duration{minimum})
	}
}

func oneOf(v string, allowed ...string) bool { return slices.Contains(allowed, v) }

func (c *Config) validateDaemon(p *problems) {
	d := &c.Daemon
	if d.Data == "" {
		p.add("daemon.data", "empty; the daemon needs a data directory, e.g. /var/lib/questbox")
	}
	p.durationAtLeast("daemon.tick", d.Tick, time.Second)
	p.atLeast("daemon.max_parallel", d.MaxParallel, 1)
	if err := checkListen(d.Listen); err != "" {
		p.add("daemon.listen", "%q %s", d.Listen, err)
	}
	if !idPattern.MatchString(d.DeviceID) {
		p.add("daemon.device_id", "%q must match [a-z0-9_-]+ (it names the box in MQTT topics)", d.DeviceID)
	}
	if sock := c.SocketPath(); d.Data != "" && len(sock) > maxSocketPath {
		key := "daemon.socket"
		if d.Socket == "" {
			key = "daemon.data"
		}
		p.add(key, "control socket path %q is %d bytes, longer than the %d a unix socket allows; set daemon.socket to a shorter path",
			sock, len(sock), maxSocketPath)
	}
	p.durationAtLeast("daemon.grace", d.Grace, 0)
	p.atLeast("daemon.event_retention", d.EventRetention, minEventRetention)
	if d.MemoryLimit != MemoryLimitOff && d.MemoryLimit < MinMemoryLimit {
		p.add("daemon.memory_limit", "%s is below the minimum %s (the collector would run back to back); write \"off\" for no limit", d.MemoryLimit, MinMemoryLimit)
	}
}

// checkListen says what is wrong with a host:port listen address, or "".
func checkListen(addr string) string {
	if addr == "" {
		return "is empty; use host:port, e.g. 127.0.0.1:8080 or :8080"
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "is not host:port (e.g. 127.0.0.1:8080 or :8080)"
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "has no valid port (0..65535)"
	}
	return ""
}

func (c *Config) validateDefaults(p *problems) {
	d := &c.Defaults
	if !oneOf(d.Mode, ModeTeam, ModeSolo) {
		p.add("defaults.mode", "%q is not one of team, solo", d.Mode)
	}
	if !c.HasProvider(d.Provider) {
		configured := "none configured"
		if len(c.Providers) > 0 {
			configured = "configured: " + strings.Join(sortedKeys(c.Providers), ", ")
		}
		p.add("defaults.provider", "%q is not a provider (built in: demo, external; %s)", d.Provider, configured)
	}
	p.atLeast("defaults.max_tries", d.MaxTries, 1)
	p.atLeast("defaults.max_agent_runs", d.MaxAgentRuns, 1)
	p.durationAtLeast("defaults.wall_clock", d.WallClock, 1)
	p.atLeast("defaults.token_budget", d.TokenBudget, 1)
	p.atLeast("defaults.max_stalled", d.MaxStalled, 1)
	p.atLeast("defaults.owner_every", d.OwnerEvery, 1)

	if len(d.Roles) == 0 {
		p.add("defaults.roles", "empty; a quest needs at least one role")
	}
	seen := map[string]bool{}
	named := true // every role listed once, with a good name
	for _, r := range d.Roles {
		switch {
		case domain.CheckRoleName(r) != nil:
			p.add("defaults.roles", "%v", domain.CheckRoleName(r))
			named = false
		case seen[r]:
			p.add("defaults.roles", "%q is listed twice", r)
			named = false
		}
		seen[r] = true
	}
	if oneOf(d.Mode, ModeTeam, ModeSolo) && len(d.Roles) > 0 && named {
		// The engine's own rule, so that no default can make every new
		// quest fail.
		if err := domain.CheckRoles(d.Mode, d.Roles); err != nil {
			p.add("defaults.roles", "%v", err)
		}
	}
	checked := map[string]bool{}
	for _, r := range d.Checkpoints {
		switch {
		case !seen[r]:
			p.add("defaults.checkpoints", "%q is not one of the roles (%s)", r, strings.Join(d.Roles, ", "))
		case checked[r]:
			p.add("defaults.checkpoints", "%q is listed twice", r)
		}
		checked[r] = true
	}
}

func (c *Config) validateProviders(p *problems) {
	for _, name := range sortedKeys(c.Providers) {
		validateProvider(p, name, c.Providers[name])
	}
}

// validateProvider checks [providers.NAME]: its name, its type and the
// fields of that type, and what every provider has (vendor, timeout,
// output cap).
func validateProvider(p *problems, name string, pr Provider) {
	base := toml.Key{"providers", name}.String()
	key := func(field string) string { return base + "." + field }
	switch {
	case name == ProviderDemo || name == ProviderExternal:
		p.add(base, "%q is reserved for the built-in provider; choose another name", name)
	case !idPattern.MatchString(name):
		p.add(base, "provider name %q must match [a-z0-9_-]+", name)
	}
	switch {
	case !p.set(key("type"), pr.Type != ""):
		p.add(key("type"), "missing; use command, openai, claude-code or codex")
	case pr.Type == TypeCommand:
		validateCommandProvider(p, key, pr)
	case pr.Type == TypeOpenAI:
		validateOpenAIProvider(p, key, pr)
	case pr.Type == TypeClaudeCode || pr.Type == TypeCodex:
		validatePresetProvider(p, key, pr)
	default:
		p.add(key("type"), "%q is not one of command, openai, claude-code, codex", pr.Type)
	}
	if pr.Vendor != "" && !idPattern.MatchString(pr.Vendor) {
		p.add(key("vendor"), "%q must match [a-z0-9_-]+ (\"local\" for the box or the LAN, else e.g. \"anthropic\" or \"openai\")", pr.Vendor)
	}
	p.durationAtLeast(key("timeout"), pr.Timeout, 1)
	if pr.OutputCap <= 0 {
		p.add(key("output_cap"), "%s must be more than 0 bytes", pr.OutputCap)
	}
}

// providerField is whether a provider sets one field (for fields that
// belong to the other type).
type providerField struct {
	name string
	set  bool
}

// notForType adds a problem for each field set that only applies to the
// other type of provider.
func notForType(p *problems, key func(string) string, fields []providerField, other, this string) {
	for _, f := range fields {
		if f.set {
			p.add(key(f.name), "only applies to %s providers, and this one is type = %q", other, this)
		}
	}
}

// validateCommandProvider checks the fields of a type = "command" provider.
func validateCommandProvider(p *problems, key func(string) string, pr Provider) {
	const argv = `a command provider needs the command to run, e.g. argv = ["/usr/local/bin/agent", "--quiet"]`
	switch {
	case !p.set(key("argv"), len(pr.Argv) > 0):
		p.add(key("argv"), "missing; "+argv)
	case len(pr.Argv) == 0:
		p.add(key("argv"), "empty; "+argv)
	case pr.Argv[0] == "":
		p.add(key("argv"), "the program (first element) is empty")
	}
	validateProgramFields(p, key, pr)
	notForType(p, key, []providerField{
		{"base_url", pr.BaseURL != ""}, {"model", pr.Model != ""},
		{"api_key_env", pr.APIKeyEnv != ""}, {"max_tokens", pr.MaxTokens != 0},
	}, "openai", TypeCommand)
}

// validatePresetProvider checks the fields of an agent CLI preset
// (type = "claude-code" or "codex"): argv is optional, and when set it
// must still ask the CLI for the output questbox reads.
func validatePresetProvider(p *problems, key func(string) string, pr Provider) {
	pre, _ := presetOf(pr.Type)
	if len(pr.Argv) > 0 {
		switch {
		case pr.Argv[0] == "":
			p.add(key("argv"), "the program (first element) is empty")
		case !containsAll(pr.Argv, pre.needs):
			p.add(key("argv"), "a %s provider's argv must keep %q, or its answer cannot be read (the default is %q)", pr.Type, pre.needs, pre.argv)
		case pr.Model != "":
			p.add(key("model"), "is added to the default command line only; with argv set, put the model flag in argv")
		}
	}
	if pr.Model != "" && strings.TrimSpace(pr.Model) == "" {
		p.add(key("model"), "empty; leave it out to use the CLI's default model")
	}
	validateProgramFields(p, key, pr)
	notForType(p, key, []providerField{
		{"base_url", pr.BaseURL != ""}, {"api_key_env", pr.APIKeyEnv != ""}, {"max_tokens", pr.MaxTokens != 0},
	}, "openai", pr.Type)
}

// validateProgramFields checks what every provider that runs a program
// has: its environment allow-list and the directories it may write.
func validateProgramFields(p *problems, key func(string) string, pr Provider) {
	for _, e := range pr.Env {
		if !envPattern.MatchString(e) {
			p.add(key("env"), "%q is not an environment variable name", e)
		}
	}
	for _, w := range pr.Write {
		if !filepath.IsAbs(w) {
			p.add(key("write"), "%q must be an absolute path", w)
		}
	}
}

// containsAll reports whether every word of want is an element of argv.
func containsAll(argv, want []string) bool {
	for _, w := range want {
		if !slices.Contains(argv, w) {
			return false
		}
	}
	return true
}

// validateOpenAIProvider checks the fields of a type = "openai" provider.
func validateOpenAIProvider(p *problems, key func(string) string, pr Provider) {
	if !p.set(key("base_url"), pr.BaseURL != "") {
		p.add(key("base_url"), "missing; an openai provider needs the endpoint, e.g. base_url = \"http://127.0.0.1:8081/v1\"")
	} else if u, err := url.Parse(pr.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		p.add(key("base_url"), "%q is not an http:// or https:// URL", pr.BaseURL)
	}
	switch {
	case !p.set(key("model"), pr.Model != ""):
		p.add(key("model"), "missing; an openai provider needs the model name")
	case strings.TrimSpace(pr.Model) == "":
		p.add(key("model"), "empty; an openai provider needs the model name")
	}
	if pr.APIKeyEnv != "" && !envPattern.MatchString(pr.APIKeyEnv) {
		p.add(key("api_key_env"), "%q is not an environment variable name (it names the variable, not the key)", pr.APIKeyEnv)
	}
	p.atLeast(key("max_tokens"), pr.MaxTokens, 0)
	notForType(p, key, []providerField{
		{"argv", len(pr.Argv) > 0}, {"env", len(pr.Env) > 0}, {"dir", pr.Dir != ""}, {"write", len(pr.Write) > 0},
	}, "command", TypeOpenAI)
}

func (g *GPIO) validate(p *problems) {
	if !oneOf(g.Backend, BackendAuto, BackendSim, BackendPeriph) {
		p.add("gpio.backend", "%q is not one of auto, sim, periph", g.Backend)
	}
	pins := []struct {
		key string
		pin int
	}{
		{"gpio.green", g.Green}, {"gpio.amber", g.Amber}, {"gpio.red", g.Red}, {"gpio.button", g.Button},
	}
	used := map[int]string{}
	for _, pn := range pins {
		switch other, dup := used[pn.pin]; {
		case pn.pin == NotFitted:
		case pn.pin == 0 || pn.pin == 1:
			p.add(pn.key, "BCM %d is reserved for the HAT ID EEPROM; use 2..27, or -1 if nothing is fitted", pn.pin)
		case pn.pin < 2 || pn.pin > 27:
			p.add(pn.key, "%d is not a header GPIO (BCM 2..27, or -1 if nothing is fitted)", pn.pin)
		case dup:
			p.add(pn.key, "BCM %d is already %s; each function needs its own pin", pn.pin, other)
		default:
			used[pn.pin] = pn.key
		}
	}
	if !oneOf(g.ButtonPull, "", PullUp, PullDown, PullNone) {
		p.add("gpio.button_pull", "%q is not one of up, down, none (or \"\" for the default of the active level)", g.ButtonPull)
	}
	p.durationAtLeast("gpio.debounce", g.Debounce, 0)
	p.durationAtLeast("gpio.long_press", g.LongPress, 1)
	if g.LongPress.Duration > 0 && g.LongPress.Duration <= g.Debounce.Duration {
		p.add("gpio.long_press", "%s must be longer than gpio.debounce (%s)", g.LongPress, g.Debounce)
	}
	p.durationAtLeast("gpio.multi_press_gap", g.MultiPressGap, 1)
	if g.MultiPressGap.Duration > 0 && g.MultiPressGap.Duration <= g.Debounce.Duration {
		p.add("gpio.multi_press_gap", "%s must be longer than gpio.debounce (%s)", g.MultiPressGap, g.Debounce)
	}
	p.durationAtLeast("gpio.consent_expiry", g.ConsentExpiry, 0)
}

// validateJudge checks a [judge] table: every key present (a [judge] that
// leaves one out is refused naming it, whatever its zero value would
// mean), the providers configured ones (command or openai; the demo and
// external providers cannot judge), the template known and the canary
// numbers consistent. judge.Config.Validate runs last as a backstop, so
// that the judge package's own rules and this check can never disagree in
// the permissive direction.
func (c *Config) validateJudge(p *problems) {
	j := c.Judge
	if j == nil {
		return
	}
	before := len(p.errs)
	for _, t := range []struct {
		key  string
		tier judge.TierConfig
	}{{"judge.light", j.Light}, {"judge.heavy", j.Heavy}} {
		const name = "name a provider configured under [providers]"
		switch prov := strings.TrimSpace(t.tier.Provider); {
		case !p.set(t.key+".provider", prov != ""):
			p.add(t.key+".provider", "missing; "+name)
		case prov == "":
			p.add(t.key+".provider", "empty; "+name)
		case !c.isConfiguredProvider(t.tier.Provider):
			configured := "none configured"
			if len(c.Providers) > 0 {
				configured = "configured: " + strings.Join(sortedKeys(c.Providers), ", ")
			}
			p.add(t.key+".provider", "%q is not a configured provider (%s); demo and external cannot judge", t.tier.Provider, configured)
		}
		const model = "the model name is part of the judge's cache fingerprint"
		switch m := strings.TrimSpace(t.tier.Model); {
		case !p.set(t.key+".model", m != ""):
			p.add(t.key+".model", "missing; "+model)
		case m == "":
			p.add(t.key+".model", "empty; "+model)
		}
	}
	switch {
	case !p.set("judge.template", strings.TrimSpace(j.Template) != ""):
		p.add("judge.template", "missing; use \"v1\"")
	case strings.TrimSpace(j.Template) == "":
		p.add("judge.template", "empty; use \"v1\"")
	default:
		if _, err := judge.TemplateByVersion(j.Template); err != nil {
			p.add("judge.template", "%q is not a known prompt template (known: v1)", j.Template)
		}
	}
	canaries := p.set("judge.canaries", j.Canaries != 0)
	if canaries {
		p.atLeast("judge.canaries", j.Canaries, 1)
	} else {
		p.add("judge.canaries", "missing; how many known-bad pairs to mix into every batch of fresh work (at least 1), e.g. canaries = 2")
	}
	// 0 is a fine threshold, so only the file can tell it is missing.
	switch {
	case !p.set("judge.canary_threshold", true):
		p.add("judge.canary_threshold", "missing; how many canaries a judge may miss before its batch escalates (0 up to judge.canaries - 1), e.g. canary_threshold = 0")
	case canaries && j.Canaries >= 1 && (j.CanaryThreshold < 0 || j.CanaryThreshold >= j.Canaries):
		p.add("judge.canary_threshold", "%d must be at least 0 and below judge.canaries (%d)", j.CanaryThreshold, j.Canaries)
	}
	if len(p.errs) == before {
		if err := j.Validate(); err != nil {
			p.add("judge", "%v", err)
		}
	}
}

// isConfiguredProvider reports whether name is under [providers].
func (c *Config) isConfiguredProvider(name string) bool {
	_, ok := c.Providers[name]
	return ok
}

func (n *Network) validate(p *problems) {
	if n.Probe != "" {
		host, port, err := net.SplitHostPort(n.Probe)
		if pn, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || pn < 1 || pn > 65535 {
			p.add("network.probe", "%q is not host:port with a port in 1..65535 (e.g. \"1.1.1.1:53\"), or \"\" for no probe", n.Probe)
		}
	}
	p.durationAtLeast("network.probe_ttl", n.ProbeTTL, time.Second)
	p.durationAtLeast("network.fetch_timeout", n.FetchTimeout, 1)
	if n.MaxBody <= 0 {
		p.add("network.max_body", "%s must be more than 0 bytes", n.MaxBody)
	}
}

// The defaults of [Logs] and the least a run's log may keep.
const (
	DefaultLogPerRun = 256 * KiB
	DefaultLogTotal  = 64 * MiB
	MinLogPerRun     = 4 * KiB
)

func (l *Logs) validate(p *problems, parallel int) {
	if l.PerRun < MinLogPerRun {
		p.add("logs.per_run", "%s is below the minimum %s", l.PerRun, MinLogPerRun)
		return
	}
	if parallel < 1 {
		parallel = 1
	}
	if need := l.PerRun * Size(parallel); l.Total < need {
		p.add("logs.total", "%s is below logs.per_run × daemon.max_parallel (%s × %d = %s): every run in flight reserves logs.per_run", l.Total, l.PerRun, parallel, need)
	}
}

// tlsSchemes are the broker URL schemes that speak TLS.
var tlsSchemes = []string{"ssl", "tls", "mqtts", "wss"}

func (m *MQTT) validate(p *problems, retention int) {
	m.validateConnection(p)
	for _, t := range []struct{ key, v string }{
		{"mqtt.topic_prefix", m.TopicPrefix}, {"mqtt.discovery_prefix", m.DiscoveryPrefix},
	} {
		if t.v == "" || strings.ContainsAny(t.v, "+#\x00") || strings.HasPrefix(t.v, "/") || strings.HasSuffix(t.v, "/") {
			p.add(t.key, "%q is not a topic prefix (non-empty, no + or #, no leading or trailing /)", t.v)
		}
	}
	if m.CommandsConsent && !m.Commands {
		p.add("mqtt.commands_consent", "needs mqtt.commands = true")
	}
	if m.OutboxMax < retention {
		p.add("mqtt.outbox_max", "%d must be at least daemon.event_retention (%d): the bound drops only events older than the retention window", m.OutboxMax, retention)
	}
	p.durationAtLeast("mqtt.reconnect_max", m.ReconnectMax, time.Second)
}

// validateConnection checks the settings of the broker connection: the
// broker URL, TLS files only with a TLS scheme, the credentials.
func (m *MQTT) validateConnection(p *problems) {
	if m.Broker == "" {
		m.validateNoBroker(p)
	}
	scheme := m.brokerScheme(p)
	if (m.CertFile == "") != (m.KeyFile == "") {
		p.add("mqtt.cert_file", "cert_file and key_file go together; set both or neither")
	}
	if scheme != "" && !slices.Contains(tlsSchemes, scheme) {
		for _, t := range []struct{ key, v string }{
			{"mqtt.ca_file", m.CAFile}, {"mqtt.cert_file", m.CertFile}, {"mqtt.key_file", m.KeyFile}, {"mqtt.server_name", m.ServerName},
		} {
			if t.v != "" {
				p.add(t.key, "is set, but mqtt.broker %q does not use TLS (use ssl://, mqtts:// or wss://)", m.Broker)
			}
		}
	}
	if m.Password != "" && m.PasswordFile != "" {
		p.add("mqtt.password", "set password or password_file, not both")
	}
	if (m.Password != "" || m.PasswordFile != "") && m.Username == "" {
		p.add("mqtt.username", "is empty, but a password is set (MQTT 3.1.1 sends a password only with a user name)")
	}
}

// validateNoBroker reports a connection setting without a broker. MQTT is
// off without a broker, which the default file relies on: its [mqtt]
// table sets topics and discovery, and leaves the broker out. But a
// setting that only serves a connection means the owner wants one, and
// staying off without a word would hide the mistake.
func (m *MQTT) validateNoBroker(p *problems) {
	for _, s := range []struct {
		key string
		set bool
	}{
		{"mqtt.client_id", m.ClientID != ""}, {"mqtt.username", m.Username != ""},
		{"mqtt.password_file", m.PasswordFile != ""}, {"mqtt.ca_file", m.CAFile != ""},
		{"mqtt.cert_file", m.CertFile != ""}, {"mqtt.key_file", m.KeyFile != ""},
	} {
		if s.set {
			what := "missing"
			if p.set("mqtt.broker", false) {
				what = "empty"
			}
			p.add("mqtt.broker", "%s, but %s is set: MQTT stays off without a broker URL (e.g. tcp://192.168.1.2:1883 or ssl://broker:8883); set one, or remove the MQTT connection settings", what, s.key)
			return
		}
	}
}

// brokerScheme checks mqtt.broker and returns its scheme, or "" when it
// is unset or not a broker URL.
func (m *MQTT) brokerScheme(p *problems) string {
	if m.Broker == "" {
		return ""
	}
	u, err := url.Parse(m.Broker)
	if err != nil || !oneOf(u.Scheme, "tcp", "ssl", "tls", "mqtt", "mqtts", "ws", "wss") || u.Host == "" {
		p.add("mqtt.broker", "%q is not a broker URL (e.g. tcp://192.168.1.2:1883 or ssl://broker:8883)", m.Broker)
		return ""
	}
	if u.User != nil {
		p.add("mqtt.broker", "%q carries credentials; use mqtt.username and mqtt.password_file", u.Redacted())
	}
	return u.Scheme
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
