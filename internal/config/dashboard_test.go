package config

import (
	"strings"
	"testing"
	"time"
)

func TestDashboardDefaults(t *testing.T) {
	c := Default()
	d := c.Dashboard
	if !d.Enabled || d.Read != ReadPassword || d.Consent || d.SessionTTL.Duration != 720*time.Hour || d.MaxClients != 128 || len(d.Origins) != 0 {
		t.Errorf("default [dashboard] = %+v", d)
	}
	c.Daemon.Data = "/data"
	if got := c.DashboardPasswordFile(); got != "/data/dashboard.password" {
		t.Errorf("DashboardPasswordFile() = %q, want /data/dashboard.password", got)
	}
	c.Dashboard.PasswordFile = "/etc/questbox/pw"
	if got := c.DashboardPasswordFile(); got != "/etc/questbox/pw" {
		t.Errorf("DashboardPasswordFile() = %q, want /etc/questbox/pw", got)
	}
}

func TestDashboardParse(t *testing.T) {
	c, err := Parse([]byte(`[dashboard]
read = "public"
consent = true
origins = ["https://qb.example.org", "http://192.168.1.20:8080"]
max_clients = 5
session_ttl = "1h"
`), "t.toml")
	if err != nil {
		t.Fatal(err)
	}
	if d := c.Dashboard; d.Read != ReadPublic || !d.Consent || len(d.Origins) != 2 || d.MaxClients != 5 || d.SessionTTL.Duration != time.Hour || !d.Enabled {
		t.Errorf("[dashboard] = %+v", d)
	}
}

// TestDashboardInvalid: every bad value is refused naming its key.
func TestDashboardInvalid(t *testing.T) {
	for _, tc := range []struct {
		name, text, key, msg string
	}{
		{"read", `read = "lan"`, "dashboard.read", `"lan" is not one of password, public`},
		{"relative password file", `password_file = "pw"`, "dashboard.password_file", "must be an absolute path"},
		{"short session", `session_ttl = "10s"`, "dashboard.session_ttl", "below the minimum 1m"},
		{"origin with path", `origins = ["https://a.example/x"]`, "dashboard.origins", "is not an origin"},
		{"origin without scheme", `origins = ["a.example"]`, "dashboard.origins", "is not an origin"},
		{"origin with slash", `origins = ["https://a.example/"]`, "dashboard.origins", "is not an origin"},
		{"no clients", `max_clients = 0`, "dashboard.max_clients", "below the minimum 1"},
		{"unknown key", `pasword_file = "/x"`, "dashboard.pasword_file", "password_file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte("[dashboard]\n"+tc.text+"\n"), "t.toml")
			if err == nil {
				t.Fatal("accepted")
			}
			ps := problemsOf(t, err)
			if len(ps) != 1 || ps[0].Key != tc.key || !strings.Contains(ps[0].Msg, tc.msg) {
				t.Errorf("got %v, want one problem with key %s saying %q", err, tc.key, tc.msg)
			}
		})
	}
}
