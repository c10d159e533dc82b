package main

import (
	"github.com/questbox/questbox/internal/daemon/daemontest"
	"github.com/questbox/questbox/ui/api"

	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/questbox/questbox/device"
	"github.com/questbox/questbox/engine"
)

// testDaemon is a `questbox run` started in-process by startDaemon.
type testDaemon struct {
	stdout, stderr *daemontest.SyncBuffer
	stop           func() error // cancels run and returns its error
}

// startDaemon runs `questbox run --data data --tick 1h args...` in a
// goroutine and returns once its control socket answers.
func startDaemon(t *testing.T, data string, args ...string) *testDaemon {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	d := &testDaemon{stdout: new(daemontest.SyncBuffer), stderr: new(daemontest.SyncBuffer)}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"run", "--data", data, "--tick", "1h"}, args...), strings.NewReader(""), d.stdout, d.stderr)
	}()
	stopped := false
	d.stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(30 * time.Second):
			t.Fatal("run did not stop after its context was cancelled")
			return nil
		}
	}
	t.Cleanup(func() { d.stop() })
	sock := filepath.Join(data, "questbox.sock")
	waitFor(t, "the control socket", func() bool {
		select {
		case err := <-done:
			t.Fatalf("run returned early: %v\n%s", err, d.stderr.String())
		default:
		}
		c, err := net.Dial("unix", sock)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return d
}

// deviceStatus is `device status --json`.
func deviceStatus(t *testing.T, data string) api.Device {
	t.Helper()
	var v api.Device
	decode(t, must(t, 0, "", "device", "status", "--json", "--data", data), &v)
	return v
}

// waitBooted waits for the boot chase to end.
func waitBooted(t *testing.T, data string) api.Device {
	t.Helper()
	var v api.Device
	waitFor(t, "the boot chase to end", func() bool {
		v = deviceStatus(t, data)
		return !v.State.Starting
	})
	return v
}

func showQuest(t *testing.T, data, id string) api.QuestDetail {
	t.Helper()
	var v api.QuestDetail
	decode(t, must(t, 0, "", "quest", "show", id, "--json", "--data", data), &v)
	return v
}

func nodeOf(t *testing.T, v api.QuestDetail, id string) api.Node {
	t.Helper()
	for _, n := range v.Nodes {
		if n.ID == id {
			return n
		}
	}
	t.Fatalf("quest %s has no node %s", v.Quest.ID, id)
	return api.Node{}
}

// TestConsentWithTheSimButton is the Device issue's acceptance with the sim
// backend: a checkpoint node awaits consent, amber shows it, a long press
// approves it, a triple press rejects the next one, and a long press with
// nothing pending changes nothing.
func TestConsentWithTheSimButton(t *testing.T) {
	data := daemontest.ShortDir(t)
	d := []string{"--data", data}
	cmd := func(args ...string) []string { return append(args, d...) }
	dm := startDaemon(t, data, "--gpio", "sim")

	// The LEDs chase while the box starts.
	if v := deviceStatus(t, data); v.State.Starting && v.Green.Pattern != "chase" {
		t.Errorf("starting, but green shows %q", v.Green.Pattern)
	}
	v := waitBooted(t, data)
	if v.Backend != "sim" || !v.Button.Simulated || v.Green.Pattern != "solid" || v.Amber.Pattern != "off" || v.Red.Pattern != "off" {
		t.Errorf("idle box: %+v", v)
	}
	if v.Green.Pin != 17 || v.Amber.Pin != 27 || v.Red.Pin != 22 || v.Button.Pin != 23 {
		t.Errorf("pins: green %d amber %d red %d button %d, want 17 27 22 23", v.Green.Pin, v.Amber.Pin, v.Red.Pin, v.Button.Pin)
	}

	must(t, 0, "", cmd("quest", "new", "cp", "--direction", "check with a human", "--provider", "external", "--checkpoint", "scout")...)
	must(t, 0, "", cmd("scan", "q1", "alpha first", "beta second")...)
	r := must(t, 4, answer("promising", "alpha works on all twenty sample invoices."), cmd("submit", "q1", "--node", "n1")...)
	if !strings.HasPrefix(r.stdout, "REVIEW") || !strings.Contains(r.stdout, "awaiting_consent") {
		t.Fatalf("submit to a checkpoint role printed:\n%s", r.stdout)
	}

	// Amber blinks at 2 Hz with the request in the queue.
	var claim string
	waitFor(t, "amber to show the consent", func() bool {
		v = deviceStatus(t, data)
		return v.Amber.Pattern == "blink 2Hz"
	})
	if len(v.Consents) != 1 || v.Consents[0].Node != "n1" || v.Consents[0].Quest != "q1" || v.Consents[0].Role != "scout" || v.Consents[0].ClaimHash == "" {
		t.Fatalf("consent queue: %+v", v.Consents)
	}
	claim = v.Consents[0].ClaimHash
	if v.State.ConsentsPending != 1 || v.Green.Pattern != "solid" || v.Red.Pattern != "off" {
		t.Errorf("awaiting consent: %+v", v)
	}
	r = must(t, 0, "", cmd("device", "status")...)
	for _, want := range []string{"backend: sim", "amber  GPIO27  blink 2Hz", "consents pending: 1", "n1    q1     scout  " + claim[:12]} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("device status lacks %q:\n%s", want, r.stdout)
		}
	}

	// A long press approves it, and the node completes.
	r = must(t, 0, "", cmd("device", "press", "--hold", "2s")...)
	if strings.TrimSpace(r.stdout) != "long (2s): approved n1" {
		t.Errorf("device press --hold 2s printed %q", r.stdout)
	}
	n1 := nodeOf(t, showQuest(t, data, "q1"), "n1")
	if n1.Status != api.NodeGrowing && n1.Status != api.NodeExplored {
		t.Errorf("after approval n1 is %s, want growing or explored", n1.Status)
	}
	waitFor(t, "amber to go dark", func() bool {
		v = deviceStatus(t, data)
		return v.Amber.Pattern == "off" && len(v.Consents) == 0
	})

	// A triple press rejects the next one: a FAIL try, back to pending.
	must(t, 4, answer("promising", "beta works on most of the sample invoices."), cmd("submit", "q1", "--node", "n2")...)
	waitFor(t, "amber to show the second consent", func() bool {
		return deviceStatus(t, data).Amber.Pattern == "blink 2Hz"
	})
	r = must(t, 0, "", cmd("device", "press", "--times", "3", "--json")...)
	var got []api.Press
	decode(t, r, &got)
	if want := []api.Press{{Press: "triple", Kind: "triple", Outcome: "rejected n2"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("device press --times 3 --json = %+v, want %+v", got, want)
	}
	n2 := nodeOf(t, showQuest(t, data, "q1"), "n2")
	if n2.Status != api.NodePending || n2.Tries != 1 || n2.Feedback != "rejected by human" {
		t.Errorf("after rejection n2 is %s, tries %d, feedback %q; want pending, 1, \"rejected by human\"", n2.Status, n2.Tries, n2.Feedback)
	}

	// A long press with nothing pending changes nothing.
	before := showQuest(t, data, "q1")
	r = must(t, 0, "", cmd("device", "press", "--hold", "2s")...)
	if strings.TrimSpace(r.stdout) != "long (2s): nothing pending" {
		t.Errorf("long press with nothing pending printed %q", r.stdout)
	}
	if after := showQuest(t, data, "q1"); !reflect.DeepEqual(before.Nodes, after.Nodes) || before.Quest.Updated != after.Quest.Updated {
		t.Errorf("a long press with nothing pending changed the quest")
	}

	// Every press is an event.
	waitFor(t, "the press events", func() bool {
		out := dm.stdout.String()
		return strings.Contains(out, "device press  long approved n1") && strings.Contains(out, "device press  triple rejected n2") &&
			strings.Contains(out, "device press  long nothing pending") && strings.Contains(out, "q1 n1 consent granted  (consent by button)")
	})

	for _, bad := range [][]string{{"--times", "0"}, {"--hold", "-1s"}, {"extra"}} {
		must(t, 1, "", cmd(append([]string{"device", "press"}, bad...)...)...)
	}

	if err := dm.stop(); err != nil {
		t.Fatalf("run: %v\n%s", err, dm.stderr.String())
	}
	// Without a daemon there is no button to press.
	r = must(t, 2, "", cmd("device", "press", "--hold", "2s")...)
	if strings.TrimSpace(r.stderr) != "questbox: no questbox daemon is running (device press needs `questbox run`)" {
		t.Errorf("device press without a daemon said %q", r.stderr)
	}
	must(t, 2, "", cmd("device", "status")...)
	must(t, 1, "", cmd("device")...)
}

// TestGPIOBackends: periph on a machine without GPIO fails naming the pin;
// auto falls back to sim with a warning; selftest refuses while a daemon
// holds the pins. (device press on real pins is refused by the device
// itself: device.TestPressRefusedOnHardware; the daemon maps it to exit 1.)
func TestGPIOBackends(t *testing.T) {
	if m, _ := filepath.Glob("/dev/gpiochip*"); len(m) > 0 {
		t.Skip("this machine has GPIO chips")
	}
	data := daemontest.ShortDir(t)
	r := must(t, 1, "", "run", "--gpio", "periph", "--data", data, "--tick", "1h")
	if !strings.Contains(r.stderr, "questbox: gpio: pin GPIO17 (green LED) not found") {
		t.Errorf("run --gpio periph said %q, want the pin named", r.stderr)
	}
	if _, err := os.Stat(filepath.Join(data, engine.StoreFile)); err == nil {
		t.Error("run --gpio periph created the store before failing on the pins")
	}
	must(t, 1, "", "run", "--gpio", "gpio", "--data", data)

	dm := startDaemon(t, data, "--gpio", "auto")
	if got := dm.stderr.String(); !strings.Contains(got, "level=WARN") || !strings.Contains(got, "GPIO17 (green LED)") {
		t.Errorf("run --gpio auto logged %q, want a warning naming GPIO17", got)
	}
	if v := deviceStatus(t, data); v.Backend != "sim" {
		t.Errorf("run --gpio auto uses %q, want sim", v.Backend)
	}
	r = must(t, 2, "", "selftest", "--data", data)
	if !strings.Contains(r.stderr, "holds the GPIO pins") {
		t.Errorf("selftest with a daemon running said %q", r.stderr)
	}
	if err := dm.stop(); err != nil {
		t.Fatal(err)
	}
	r = must(t, 1, "", "selftest", "--data", data)
	if !strings.Contains(r.stderr, "pin GPIO17 (green LED) not found") {
		t.Errorf("selftest without GPIO said %q", r.stderr)
	}
	must(t, 1, "", "selftest", "--gpio", "sim", "--data", data)
}

// TestConsentExpiry: a request older than gpio.consent_expiry expires: the
// node goes back to pending with no try consumed, a consent "expired" event
// is printed once, amber goes dark and a long press finds nothing pending.
func TestConsentExpiry(t *testing.T) {
	data := daemontest.ShortDir(t)
	cfg := filepath.Join(data, "questbox.toml")
	os.WriteFile(cfg, []byte("[gpio]\nbackend = \"sim\"\nconsent_expiry = \"2s\"\n"), 0o644)
	d := []string{"--data", data, "--config", cfg}
	cmd := func(args ...string) []string { return append(args, d...) }
	dm := startDaemon(t, data, "--config", cfg)
	waitBooted(t, data)
	must(t, 0, "", cmd("quest", "new", "cp", "--direction", "check with a human", "--provider", "external", "--checkpoint", "scout")...)
	must(t, 0, "", cmd("scan", "q1", "alpha")...)
	must(t, 4, answer("promising", "alpha works on all twenty sample invoices."), cmd("submit", "q1", "--node", "n1")...)

	waitFor(t, "the consent to expire", func() bool {
		return nodeOf(t, showQuest(t, data, "q1"), "n1").Status == api.NodePending
	})
	n := nodeOf(t, showQuest(t, data, "q1"), "n1")
	if n.Tries != 0 || n.Attempts[len(n.Attempts)-1].Outcome != "expired" {
		t.Errorf("after expiry: tries %d, attempts %+v; want no try used and an expired attempt", n.Tries, n.Attempts)
	}
	waitFor(t, "amber to go dark", func() bool { return deviceStatus(t, data).Amber.Pattern == "off" })
	waitFor(t, "the expiry event", func() bool {
		return strings.Contains(dm.stdout.String(), "q1 n1 consent expired")
	})
	r := must(t, 0, "", cmd("device", "press", "--hold", "2s")...)
	if strings.TrimSpace(r.stdout) != "long (2s): nothing pending" {
		t.Errorf("long press on an expired request printed %q", r.stdout)
	}
	if err := dm.stop(); err != nil {
		t.Fatal(err)
	}
}

// TestOfflineLED: the daemon's probe finds its target closed, so the box
// shows offline (amber flash) and records network_down; when the target
// answers, the next tick after probe_ttl clears it and records network_up.
func TestOfflineLED(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	data := daemontest.ShortDir(t)
	conf := filepath.Join(data, "questbox.toml")
	os.WriteFile(conf, []byte("[network]\nprobe = \""+addr+"\"\nprobe_ttl = \"1s\"\n"), 0o644)
	d := []string{"--data", data, "--config", conf}
	dm := startDaemon(t, data, "--gpio", "sim", "--config", conf)
	waitBooted(t, data)
	must(t, 0, "", append([]string{"tick"}, d...)...)
	v := deviceStatus(t, data)
	if !v.State.Offline || v.Amber.Pattern != device.PatternOffline.String() {
		t.Errorf("probe target closed: offline %v, amber %q, want offline and %q", v.State.Offline, v.Amber.Pattern, device.PatternOffline)
	}

	l, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s again: %v", addr, err)
	}
	defer l.Close()
	// The probe trusts its last result for probe_ttl (1s); tick until it
	// looks again.
	waitFor(t, "the box to come back online", func() bool {
		must(t, 0, "", append([]string{"tick"}, d...)...)
		return !deviceStatus(t, data).State.Offline
	})
	if v := deviceStatus(t, data); v.Amber.Pattern != "off" {
		t.Errorf("online again, but amber shows %q", v.Amber.Pattern)
	}
	if err := dm.stop(); err != nil {
		t.Fatal(err)
	}
	var evs []string
	all, err := engineEvents(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range all {
		if ev.Kind == engine.KindDevice && strings.HasPrefix(ev.Outcome, "network_") {
			evs = append(evs, ev.Outcome+" "+ev.Detail)
		}
	}
	if want := []string{"network_down " + addr, "network_up " + addr}; !reflect.DeepEqual(evs, want) {
		t.Errorf("network events %q, want %q", evs, want)
	}
}

// TestDeviceStatusShowsTheBroker: the text of `device status` says what
// --json says of the MQTT broker: a broker nobody answers is shown not
// connected, with the reason.
func TestDeviceStatusShowsTheBroker(t *testing.T) {
	data := daemontest.ShortDir(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now: connection refused
	cfg := writeConfig(t, fmt.Sprintf("[network]\nprobe = \"\"\n[daemon]\nlisten = \"127.0.0.1:0\"\n[mqtt]\nbroker = \"tcp://%s\"\n", addr))
	startDaemon(t, data, "--gpio", "sim", "--config", cfg)
	waitFor(t, "the broker's error", func() bool {
		var v api.Device
		decode(t, must(t, 0, "", "device", "status", "--json", "--data", data, "--config", cfg), &v)
		return v.Broker.Error != ""
	})
	r := must(t, 0, "", "device", "status", "--data", data, "--config", cfg)
	if !strings.Contains(r.stdout, "mqtt broker: not connected: ") || !strings.Contains(r.stdout, "network: online") {
		t.Errorf("device status does not show the broker and the network:\n%s", r.stdout)
	}
	for _, tc := range []struct {
		b    api.Broker
		want string
	}{
		{api.Broker{}, "off (no [mqtt] broker configured)"},
		{api.Broker{Configured: true}, "connecting"},
		{api.Broker{Configured: true, Connected: true}, "connected"},
		{api.Broker{Configured: true, Error: "the broker refused the login: not authorised", Fault: true},
			"not connected: the broker refused the login: not authorised (a fault: fix the [mqtt] section or the broker, then restart)"},
	} {
		if got := brokerText(tc.b); got != tc.want {
			t.Errorf("brokerText(%+v) = %q, want %q", tc.b, got, tc.want)
		}
	}
}
