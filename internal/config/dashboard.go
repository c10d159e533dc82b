package config

import (
	"net/url"
	"path/filepath"
	"strings"
	"time"
)

// Reading policies of the dashboard (dashboard.read).
const (
	// ReadPassword: every page, API read, websocket and /metrics needs a
	// logged-in session (or, for GET, HTTP basic auth with the password).
	ReadPassword = "password"
	// ReadPublic: anyone who can reach the listen address may read;
	// changes still need the password.
	ReadPublic = "public"
)

// PasswordFile is the dashboard's password file in the data directory when
// dashboard.password_file is "".
const PasswordFile = "dashboard.password"

// FirstPasswordFile holds, in the data directory, the password the daemon
// generated on its first start, in clear, mode 0600, until `questbox
// password` sets another.
const FirstPasswordFile = "dashboard.first-password"

// Dashboard configures the web dashboard served on daemon.listen
// (docs/design.md, "The dashboard and the API").
type Dashboard struct {
	// Enabled serves the dashboard, its API and /metrics on daemon.listen.
	// Default true.
	Enabled bool `toml:"enabled"`
	// Read is who may read: "password" (default) or "public" (anyone on the
	// network). Changes always need the password.
	Read string `toml:"read"`
	// Consent lets a logged-in dashboard session approve and reject
	// consent requests (L3, recorded as "dashboard:owner"). Default false:
	// consent stays physical, on the button.
	Consent bool `toml:"consent"`
	// PasswordFile holds the password's hash and the session key (mode
	// 0600); "" is <daemon.data>/dashboard.password. It is created with a
	// generated password on first start; `questbox password` replaces it.
	PasswordFile string `toml:"password_file"`
	// SessionTTL is how long a login lasts. Default 720h (30 days); at
	// least 1m.
	SessionTTL Duration `toml:"session_ttl"`
	// Origins are extra origins (scheme://host[:port]) allowed to open the
	// websocket and send changes, e.g. a reverse proxy's public name. The
	// dashboard's own origin is always allowed.
	Origins []string `toml:"origins"`
	// MaxClients caps open websockets; more are refused with 503.
	// Default 128; at least 1.
	MaxClients int `toml:"max_clients"`
}

// defaultDashboard is the [dashboard] of [Default].
func defaultDashboard() Dashboard {
	return Dashboard{Enabled: true, Read: ReadPassword, SessionTTL: Duration{30 * 24 * time.Hour}, Origins: []string{}, MaxClients: 128}
}

// DashboardPasswordFile is Dashboard.PasswordFile, or
// <Daemon.Data>/dashboard.password when that is "".
func (c *Config) DashboardPasswordFile() string {
	if c.Dashboard.PasswordFile != "" {
		return c.Dashboard.PasswordFile
	}
	return filepath.Join(c.Daemon.Data, PasswordFile)
}

func (d *Dashboard) validate(p *problems) {
	if !oneOf(d.Read, ReadPassword, ReadPublic) {
		p.add("dashboard.read", "%q is not one of password, public", d.Read)
	}
	if d.PasswordFile != "" && !filepath.IsAbs(d.PasswordFile) {
		p.add("dashboard.password_file", "%q must be an absolute path", d.PasswordFile)
	}
	p.durationAtLeast("dashboard.session_ttl", d.SessionTTL, time.Minute)
	for _, o := range d.Origins {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") ||
			u.RawQuery != "" || u.User != nil || strings.HasSuffix(o, "/") {
			p.add("dashboard.origins", "%q is not an origin such as https://questbox.example.org or http://192.168.1.20:8080", o)
		}
	}
	p.atLeast("dashboard.max_clients", d.MaxClients, 1)
}

// DashboardFirstPasswordFile is <Daemon.Data>/dashboard.first-password.
func (c *Config) DashboardFirstPasswordFile() string {
	return filepath.Join(c.Daemon.Data, FirstPasswordFile)
}
