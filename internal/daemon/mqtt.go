package daemon

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/questbox/questbox/device/box"
	"github.com/questbox/questbox/internal/config"
	"github.com/questbox/questbox/ui/api"
	"github.com/questbox/questbox/ui/mqtt"
)

// startMQTT is the daemon's MQTT presence (docs/design.md, "MQTT"): with [mqtt]
// configured, a client that publishes the engine's events and state until
// stopMQTT (called by stop, after the runs finished and before the store
// closes, so "offline" is the last word). Without it, MQTT's durable cursor
// is removed so that it no longer holds events in the outbox. A broker
// that is down or refuses us never stops the daemon: the box shows it.
//
// It runs on cfg, the config in force; d.mu is held.
func (d *daemon) startMQTT(cfg *config.Config) {
	d.stopMQTT = func() {}
	if !cfg.MQTT.Enabled() {
		d.box.SetBroker(box.Broker{})
		if err := d.eng.RemoveConsumer(mqtt.Consumer); err != nil {
			d.log.Error("mqtt: could not remove the MQTT outbox cursor", "err", err)
		}
		return
	}
	opt, err := mqttOptions(cfg, d.e.Version, os.Hostname)
	if err == nil {
		opt.OnState = func(b api.Broker) { d.setBroker(box.Broker(b)) }
		opt.Log = d.log
		var c *mqtt.Client
		ao := d.localAPI()
		if _, kerr := os.Stat(d.e.ReleaseKeyPath()); kerr == nil {
			// Signed updates are configured: Home Assistant gets the
			// firmware's update entity.
			ao.Update = daemonUpdater{d}
		}
		if c, err = mqtt.New(ao, opt); err == nil {
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				if err := c.Run(ctx); err != nil {
					d.log.Error("mqtt: stopped", "err", err)
					d.setBroker(box.Broker{Configured: true, Error: err.Error(), Fault: true})
				}
			}()
			d.stopMQTT = func() { cancel(); <-done }
			return
		}
	}
	d.log.Error("mqtt: not started; fix the [mqtt] section and reload", "err", err)
	d.setBroker(box.Broker{Configured: true, Error: err.Error(), Fault: true})
}

// mqttOptions turns the [mqtt] section into the client's options for
// questbox version: it reads the password file and the TLS files. Errors
// name the key.
func mqttOptions(cfg *config.Config, version string, hostname func() (string, error)) (mqtt.Options, error) {
	m := cfg.MQTT
	opt := mqtt.Options{Broker: m.Broker, ClientID: cfg.MQTTClientID(), Username: m.Username, Password: m.Password,
		Base: cfg.MQTTBase(), DeviceID: cfg.Daemon.DeviceID, Version: version,
		DashboardURL: dashboardURL(cfg.Daemon.Listen, hostname),
		Discovery:    m.Discovery, DiscoveryPrefix: m.DiscoveryPrefix, Commands: m.Commands, Consent: m.CommandsConsent,
		ReconnectMax: m.ReconnectMax.Duration}
	if m.PasswordFile != "" {
		b, err := os.ReadFile(m.PasswordFile)
		if err != nil {
			return opt, fmt.Errorf("mqtt.password_file: %w", err)
		}
		opt.Password = strings.TrimRight(string(b), "\r\n")
	}
	u, err := url.Parse(m.Broker)
	if err != nil {
		return opt, fmt.Errorf("mqtt.broker: %w", err)
	}
	if slices.Contains([]string{"ssl", "tls", "mqtts", "wss"}, u.Scheme) {
		if opt.TLS, err = mqtt.TLSConfig(mqtt.TLSFiles{CA: m.CAFile, Cert: m.CertFile, Key: m.KeyFile, ServerName: m.ServerName}); err != nil {
			return opt, err
		}
	}
	return opt, nil
}

// dashboardURL is where Home Assistant's "visit device" goes: the
// dashboard on daemon.listen, by the box's mDNS name when it listens on
// every address.
func dashboardURL(listen string, hostname func() (string, error)) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return ""
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		h, err := hostname()
		if err != nil || h == "" {
			return ""
		}
		host = h
		if !strings.Contains(h, ".") {
			host = h + ".local"
		}
	}
	return "http://" + net.JoinHostPort(host, port) + "/"
}
