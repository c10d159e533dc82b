package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/questbox/questbox/internal/buildtest"
	"github.com/questbox/questbox/internal/daemon/daemontest"
	"github.com/questbox/questbox/ui/api"
	"github.com/questbox/questbox/ui/api/apitest"
	"github.com/questbox/questbox/ui/mqtt/mosquittotest"
)

// mqttConfig writes a config for a box "cmdbox" on broker b, logging in
// as qb with password pass, and returns its path.
func mqttConfig(t *testing.T, dir string, b *mosquittotest.Broker, pass string) string {
	t.Helper()
	pw := filepath.Join(dir, "mqtt-password")
	if err := os.WriteFile(pw, []byte(pass+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "questbox.toml")
	text := fmt.Sprintf(`[daemon]
device_id = "cmdbox"
[network]
probe = ""
[gpio]
backend = "sim"
[mqtt]
broker = %q
username = "qb"
password_file = %q
reconnect_max = "1s"
`, b.URL(), pw)
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestMQTTDaemonPublishesAQuestAsItRuns(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{Users: map[string]string{"qb": "secret"}})
	dir := daemontest.ShortDir(t)
	data := dataDir(t)
	cfg := mqttConfig(t, dir, b, "secret")
	sub := b.SubscribeAs(t, "questbox/#", "qb", "secret")
	d := startDaemon(t, data, "--config", cfg, "--tick", "100ms")
	sub.WaitFor("status online", func(msgs []mosquittotest.Message) bool {
		m, ok := mosquittotest.Last(msgs, "questbox/cmdbox/status")
		return ok && m.Payload == "online"
	})
	var q api.Quest
	decode(t, must(t, 0, "", "quest", "new", "mqtt demo", "--direction", "find the most accurate free OCR for Japanese invoices",
		"--provider", "demo", "--json", "--data", data), &q)
	msgs := sub.WaitFor("the quest's retained state and its verdicts", func(msgs []mosquittotest.Message) bool {
		m, ok := mosquittotest.Last(msgs, "questbox/cmdbox/quest/"+q.ID+"/state")
		_, kinds := apitest.EventSeqs(t, msgs)
		return ok && strings.Contains(m.Payload, `"id":"`+q.ID+`"`) && kinds["verdict"] > 1 && kinds["node"] > 1
	})
	seqs, _ := apitest.EventSeqs(t, msgs)
	for i := 1; i < len(seqs); i++ {
		if seqs[i] <= seqs[i-1] {
			t.Fatalf("seq %d after %d: not increasing (%v)", seqs[i], seqs[i-1], seqs)
		}
	}
	if st := deviceStatus(t, data); !st.Broker.Configured || !st.Broker.Connected || st.Broker.Fault {
		t.Errorf("device status broker %+v, want connected", st.Broker)
	}
	// SIGTERM: the runs finish, then "offline", then the store closes.
	if err := d.stop(); err != nil {
		t.Fatal(err)
	}
	sub.WaitFor("offline at shutdown", func(msgs []mosquittotest.Message) bool {
		m, ok := mosquittotest.Last(msgs, "questbox/cmdbox/status")
		return ok && m.Payload == "offline"
	})
}

func TestMQTTWrongPasswordIsAFaultAndTheDaemonKeepsTicking(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{Users: map[string]string{"qb": "secret"}})
	dir := daemontest.ShortDir(t)
	data := dataDir(t)
	cfg := mqttConfig(t, dir, b, "wrong")
	d := startDaemon(t, data, "--config", cfg, "--tick", "100ms")
	var st api.Device
	waitFor(t, "the broker fault", func() bool {
		st = deviceStatus(t, data)
		return st.Broker.Fault
	})
	if st.Broker.Connected || !strings.Contains(st.Broker.Error, "not authorised") || !strings.Contains(st.State.Fault, "broker") {
		t.Errorf("device status %+v, want a broker fault on the LEDs", st)
	}
	if !strings.Contains(d.stderr.String(), "mqtt: the broker refused the login: not authorised") {
		t.Errorf("no clear log line:\n%s", d.stderr.String())
	}
	var q api.Quest
	decode(t, must(t, 0, "", "quest", "new", "still runs", "--direction", "find the most accurate free OCR for Japanese invoices",
		"--provider", "demo", "--json", "--data", data), &q)
	waitFor(t, "the quest to run without the broker", func() bool {
		return showQuest(t, data, q.ID).Quest.Used.AgentRuns > 0
	})
}

func TestMQTTLastWillWhenTheDaemonIsKilled(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{Users: map[string]string{"qb": "secret"}})
	dir := daemontest.ShortDir(t)
	cfg := mqttConfig(t, dir, b, "secret")
	bin := buildtest.Questbox(t)
	sub := b.SubscribeAs(t, "questbox/cmdbox/status", "qb", "secret")
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	daemon := exec.Command(bin, "run", "--config", cfg, "--data", data)
	logf, err := os.Create(filepath.Join(dir, "daemon.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	daemon.Stdout, daemon.Stderr = logf, logf
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { daemon.Process.Kill(); daemon.Wait() })
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("daemon log:\n%s", b)
		}
	})
	sub.WaitFor("online", func(msgs []mosquittotest.Message) bool {
		return len(msgs) > 0 && msgs[len(msgs)-1].Payload == "online"
	})
	if err := daemon.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	daemon.Wait()
	sub.WaitFor("offline from the broker (the Last Will)", func(msgs []mosquittotest.Message) bool {
		return msgs[len(msgs)-1].Payload == "offline"
	})
}

func TestMQTTCheckConfigReadsTheFiles(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "questbox.toml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("[mqtt]\nbroker = \"ssl://broker:8883\"\nca_file = %q\n", filepath.Join(dir, "missing-ca.pem"))), 0o644)
	r := must(t, 1, "", "run", "--check-config", "--config", cfg, "--data", dir)
	if !strings.Contains(r.stderr, "mqtt.ca_file:") {
		t.Errorf("check-config does not name mqtt.ca_file:\n%s", r.stderr)
	}
}
