package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/prompttmpl"
)

// Role configures one role for every quest ([roles.NAME], docs/design.md,
// "Roles"). NAME is a role name (domain.CheckRoleName): one of a quest's
// roles (scout, poc, strategist, owner, or a quest's own) or a council or
// Team role (reviewer, judge, planner, executer, accepter).
type Role struct {
	// Provider is the role's provider ("" = the quest's): a built-in or
	// configured one. `quest new` records it on the quest for the roles
	// the quest uses, so that changing it later rewires new quests only;
	// `quest new --role-provider ROLE=PROVIDER` overrides it.
	Provider string `toml:"provider"`
	// Template is a file holding the role's prompt, in the template
	// language of engine/prompttmpl (a part of Go's text/template),
	// rendered with engine.PromptData ("" = the built-in prompt). A
	// relative path is relative to the configuration file's directory.
	// It is read at start-up; `run --check-config` reports a file that
	// cannot be read, uses what the language does not have, or names a
	// field PromptData lacks, with its line and column.
	Template string `toml:"template"`
	// MaxTries, when more than 0, replaces the quest's max_tries for the
	// role's nodes. Default 0: the quest's.
	MaxTries int `toml:"max_tries"`
	// EvidenceCap (owner only) bounds the locked nodes' evidence the
	// owner's prompt carries, newest first, each node's evidence cut to
	// a quarter of it with a marker. Default 0: engine.DefaultEvidenceCap
	// (8KiB).
	EvidenceCap Size `toml:"evidence_cap"`
}

// Privacy is what may leave the box ([privacy], docs/design.md,
// "Privacy egress").
type Privacy struct {
	// Redact are regular expressions (Go's RE2 syntax) masked as
	// "[redacted]" in every prompt sent to a provider or an L2 judge
	// whose vendor is not "local" (the run records that it was
	// redacted), and in every run's log. Default none.
	Redact []string `toml:"redact"`
	// EgressConsent makes `quest new` ask a human's consent (the button's
	// long press, or the dashboard where dashboard.consent is on) for a
	// quest whose egress names a vendor that is not "local": nothing of
	// the quest leaves the box until it is given, and a refusal ends the
	// quest. Default false, so that `make run` (no config file) and its
	// demo run as they are; the installed config file turns it on.
	EgressConsent bool `toml:"egress_consent"`
}

// VendorOf is the vendor of provider name: local for the built-in demo
// and external providers, a configured provider's vendor, or, when it
// names none, the provider's own name (a vendor of its own, never local:
// an undeclared provider's prompts are redacted, and a quest allows it
// only when it is the quest's own provider or its egress names it).
func (c *Config) VendorOf(name string) string {
	if name == ProviderDemo || name == ProviderExternal {
		return engine.VendorLocal
	}
	p := c.Providers[name]
	if p.Vendor != "" {
		return p.Vendor
	}
	if pre, ok := presetOf(p.Type); ok {
		return pre.vendor
	}
	return name
}

// Vendors maps every configured provider to its vendor ([Config.VendorOf]).
func (c *Config) Vendors() map[string]string {
	out := map[string]string{}
	for name := range c.Providers {
		out[name] = c.VendorOf(name)
	}
	return out
}

func (c *Config) validateRoles(p *problems) {
	for _, name := range sortedKeys(c.Roles) {
		r := c.Roles[name]
		base := toml.Key{"roles", name}.String()
		key := func(field string) string { return base + "." + field }
		if err := domain.CheckRoleName(name); err != nil {
			p.add(base, "%v", err)
		}
		if r.Provider != "" && !c.HasProvider(r.Provider) {
			configured := "none configured"
			if len(c.Providers) > 0 {
				configured = "configured: " + strings.Join(sortedKeys(c.Providers), ", ")
			}
			p.add(key("provider"), "%q is not a provider (built in: demo, external; %s)", r.Provider, configured)
		}
		if p.set(key("template"), r.Template != "") && strings.TrimSpace(r.Template) == "" {
			p.add(key("template"), "empty; name a prompt template file, or remove the key for the built-in prompt")
		}
		p.atLeast(key("max_tries"), r.MaxTries, 0)
		switch {
		case r.EvidenceCap < 0:
			p.add(key("evidence_cap"), "%s is negative", r.EvidenceCap)
		case r.EvidenceCap != 0 && name != engine.RoleOwner:
			p.add(key("evidence_cap"), "only applies to [roles.owner]: only the owner's prompt carries the locked nodes' evidence")
		}
	}
}

func (v *Privacy) validate(p *problems) {
	for i, re := range v.Redact {
		key := fmt.Sprintf("privacy.redact[%d]", i)
		switch _, err := regexp.Compile(re); {
		case re == "":
			p.add(key, "empty; a pattern that matches nothing useful would mask every position")
		case err != nil:
			p.add(key, "%q is not a regular expression: %v", re, err)
		}
	}
}

// Warnings are what the configuration lets run but its owner should
// know, each a sentence naming its keys: an L2 judge tier whose vendor is
// not local while privacy.redact is empty (its prompts, the answers'
// claims and every cited source, leave the box masked only of the
// configured secrets). `run --check-config` prints them; the daemon logs
// them at start.
func (c *Config) Warnings() []string {
	var out []string
	if c.Judge == nil || len(c.Privacy.Redact) > 0 {
		return nil
	}
	for _, t := range []struct {
		key  string
		tier string
	}{{"judge.light", c.Judge.Light.Provider}, {"judge.heavy", c.Judge.Heavy.Provider}} {
		if v := c.VendorOf(t.tier); v != engine.VendorLocal {
			out = append(out, fmt.Sprintf("%s: provider %q is vendor %q, not local, and privacy.redact is empty: the judge's prompts (claims and the sources they cite) leave the box masked only of the configured secrets; list what must not leave in privacy.redact",
				t.key, t.tier, v))
		}
	}
	return out
}

// RedactPatterns are privacy.redact, compiled. The configuration was
// validated: every pattern compiles.
func (c *Config) RedactPatterns() []*regexp.Regexp {
	out := make([]*regexp.Regexp, 0, len(c.Privacy.Redact))
	for _, re := range c.Privacy.Redact {
		if r, err := regexp.Compile(re); err == nil {
			out = append(out, r)
		}
	}
	return out
}

// TemplatePath is where the template of role is read from: its
// roles.NAME.template, relative to the configuration file's directory
// unless absolute; "" when the role has none.
func (c *Config) TemplatePath(role string) string {
	t := c.Roles[role].Template
	if t == "" || filepath.IsAbs(t) || c.Path == "" {
		return t
	}
	return filepath.Join(filepath.Dir(c.Path), t)
}

// RoleOptions reads and parses every role's prompt template (readFile is
// os.ReadFile but in tests) and returns the engine's role options. Each
// problem — a file that cannot be read, a template that does not parse or
// names a field engine.PromptData lacks — is an [*Error] naming
// roles.NAME.template, all of them joined.
func (c *Config) RoleOptions(readFile func(string) ([]byte, error)) (map[string]engine.RoleOptions, error) {
	if readFile == nil {
		readFile = os.ReadFile
	}
	out := map[string]engine.RoleOptions{}
	var errs []error
	for _, name := range sortedKeys(c.Roles) {
		r := c.Roles[name]
		ro := engine.RoleOptions{Provider: r.Provider, MaxTries: r.MaxTries, EvidenceCap: int(r.EvidenceCap)}
		if path := c.TemplatePath(name); path != "" {
			key := toml.Key{"roles", name, "template"}.String()
			tmpl, err := loadTemplate(path, readFile)
			if err != nil {
				errs = append(errs, &Error{File: c.Path, Key: key, Msg: key + ": " + err.Error()})
				continue
			}
			ro.Prompt = tmpl
		}
		out[name] = ro
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// loadTemplate reads and parses the prompt template at path.
func loadTemplate(path string, readFile func(string) ([]byte, error)) (*prompttmpl.Template, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, fmt.Errorf("%q cannot be read: %w", path, err)
	}
	tmpl, err := engine.ParsePromptTemplate(filepath.Base(path), string(data))
	if err != nil {
		return nil, fmt.Errorf("%q is not a prompt template: %w", path, err)
	}
	return tmpl, nil
}
