package daemon

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/questbox/questbox/internal/config"
)

func TestMQTTOptions(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("s3cret\r\n"), 0o600)
	cfg := config.Default()
	cfg.Daemon.DeviceID, cfg.Daemon.Listen = "kitchen", ":8080"
	cfg.MQTT.Broker, cfg.MQTT.Username, cfg.MQTT.PasswordFile = "tcp://b:1883", "qb", pw
	host := func() (string, error) { return "kitchen-pi", nil }
	opt, err := mqttOptions(cfg, "dev", host)
	if err != nil {
		t.Fatal(err)
	}
	if opt.Password != "s3cret" || opt.Base != "questbox/kitchen" || opt.ClientID != "questbox-kitchen" ||
		opt.DashboardURL != "http://kitchen-pi.local:8080/" || opt.TLS != nil || !opt.Discovery || opt.Commands {
		t.Errorf("options %+v", opt)
	}
	cfg.MQTT.Broker, cfg.MQTT.CAFile = "ssl://b:8883", filepath.Join(dir, "missing.pem")
	if _, err := mqttOptions(cfg, "dev", host); err == nil || !strings.HasPrefix(err.Error(), "mqtt.ca_file:") {
		t.Errorf("a missing CA file: got %v, want an error naming mqtt.ca_file", err)
	}
	cfg.MQTT.PasswordFile = filepath.Join(dir, "nope")
	if _, err := mqttOptions(cfg, "dev", host); err == nil || !strings.HasPrefix(err.Error(), "mqtt.password_file:") || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing password file: got %v, want an error naming mqtt.password_file", err)
	}
	for _, tt := range []struct{ listen, want string }{
		{"127.0.0.1:8080", "http://127.0.0.1:8080/"},
		{"0.0.0.0:80", "http://kitchen-pi.local:80/"},
		{"[::]:8080", "http://kitchen-pi.local:8080/"},
		{"questbox.lan:8080", "http://questbox.lan:8080/"},
		{"nonsense", ""},
	} {
		if got := dashboardURL(tt.listen, host); got != tt.want {
			t.Errorf("dashboardURL(%q) = %q, want %q", tt.listen, got, tt.want)
		}
	}
}
