package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/questbox/questbox/device"
	"github.com/questbox/questbox/internal/daemon/daemontest"
	"github.com/questbox/questbox/ui/api"
	"github.com/questbox/questbox/ui/api/apitest"
	"github.com/questbox/questbox/ui/mqtt/mosquittotest"
)

// busyConfig writes a config whose provider "busy" always answers
// promising with a fresh direction, so a solo quest writes every tick and
// keeps growing, and returns its path.
func busyConfig(t *testing.T, extra string) string {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, "agent.sh")
	body := `cat >/dev/null
u=$(cat /proc/sys/kernel/random/uuid)
printf 'Findings.\n` + "```json" + `\n{"verdict":"promising","evidence":"run %s looked into it and found a lead","citations":[],"new_directions":["lead %s"]}\n` + "```" + `\n' $u $u
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "questbox.toml")
	text := fmt.Sprintf(`[providers.busy]
type = "command"
argv = ["/bin/sh", %q]
env = ["PATH"]
timeout = "30s"
[network]
probe = ""
%s`, script, extra)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return conf
}

func newBusyQuest(t *testing.T, data, conf string) {
	t.Helper()
	must(t, 0, "", "quest", "new", "busy", "--direction", "keep the disk busy", "--provider", "busy", "--mode", "solo",
		"--roles", "scout,poc,strategist", "--max-agent-runs", "100000", "--config", conf, "--data", data)
}

func agentRuns(t *testing.T, data, quest string) int {
	t.Helper()
	var st api.Status
	decode(t, must(t, 0, "", "status", quest, "--json", "--data", data), &st)
	return st.Used.AgentRuns
}

// TestFullDiskFaultLEDAndResume fills the card under a running daemon: the
// store's writes fail, red blinks the fault (4 Hz) and `device status`
// names it, reads still answer; when space returns the daemon records again
// by itself, the fault clears, and the store verifies.
func TestFullDiskFaultLEDAndResume(t *testing.T) {
	data := tmpfs(t, "2m")
	conf := busyConfig(t, "")
	d := startDaemon(t, data, "--config", conf, "--tick", "50ms", "--gpio", "sim")
	waitBooted(t, data)
	newBusyQuest(t, data, conf)
	waitFor(t, "a few agent runs", func() bool { return agentRuns(t, data, "q1") >= 3 })

	filler := filepath.Join(data, "filler")
	exec.Command("dd", "if=/dev/zero", "of="+filler, "bs=4k").Run() // until the disk is full
	var v api.Device
	waitFor(t, "the fault on the LEDs", func() bool {
		v = deviceStatus(t, data)
		return v.State.Fault != ""
	})
	if v.Red.Pattern != device.PatternFault.String() {
		t.Errorf("disk full: red shows %q, want %q (fault %q)", v.Red.Pattern, device.PatternFault, v.State.Fault)
	}
	if !strings.Contains(v.State.Fault, "no space left on device") {
		t.Errorf("the fault does not say the disk is full: %q", v.State.Fault)
	}
	stuck := agentRuns(t, data, "q1") // reads answer while writes fail

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the daemon to record again and the fault to clear", func() bool {
		v = deviceStatus(t, data)
		return v.State.Fault == "" && agentRuns(t, data, "q1") > stuck+2
	})
	if v.Red.Pattern == device.PatternFault.String() {
		t.Errorf("space is back, but red still shows %q", v.Red.Pattern)
	}
	if err := d.stop(); err != nil {
		t.Fatal(err)
	}
	must(t, 0, "", "verify", "--data", data)
}

// TestBrokerStoppedAndRestarted stops the broker under a running daemon:
// the box shows it (not connected, with the error; not a fault, which is
// for what a person must fix) and keeps working; when the
// broker is back the daemon reconnects by itself and every event recorded
// meanwhile reaches the subscriber, in order, none missing.
func TestBrokerStoppedAndRestarted(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{Users: map[string]string{"qb": "secret"}})
	dir := daemontest.ShortDir(t)
	data := dataDir(t)
	cfg := mqttConfig(t, dir, b, "secret")
	sub := b.SubscribeAs(t, "questbox/cmdbox/event/#", "qb", "secret")
	startDaemon(t, data, "--config", cfg, "--tick", "100ms")
	waitFor(t, "the broker connection", func() bool { return deviceStatus(t, data).Broker.Connected })
	must(t, 0, "", "quest", "new", "flaps", "--direction", "survive a broker restart", "--provider", "external", "--data", data)

	b.Stop()
	waitFor(t, "the broker to show as down", func() bool {
		st := deviceStatus(t, data)
		return !st.Broker.Connected && st.Broker.Error != ""
	})
	if st := deviceStatus(t, data); st.Broker.Fault {
		t.Errorf("a broker that went away is a fault a person must fix: %+v (want a plain disconnection)", st.Broker)
	}
	// Work goes on while the broker is away; its events wait in the outbox.
	for i := range 20 {
		must(t, 0, "", "scan", "q1", fmt.Sprintf("while the broker is down %d", i), "--data", data)
	}
	must(t, 0, "", "quest", "abort-node", "n3", "--reason", "offline work", "--data", data)
	b.Restart()
	waitFor(t, "the reconnection", func() bool {
		st := deviceStatus(t, data)
		return st.Broker.Connected && !st.Broker.Fault
	})
	last := lastSeq(t, data)
	msgs := sub.WaitFor("every event up to the last", func(msgs []mosquittotest.Message) bool {
		seqs, _ := apitest.EventSeqs(t, msgs)
		return len(seqs) > 0 && seqs[len(seqs)-1] >= last
	})
	seqs, _ := apitest.EventSeqs(t, msgs)
	seen := map[uint64]bool{}
	for i, s := range seqs {
		if i > 0 && s < seqs[i-1] && !seen[s] {
			t.Errorf("seq %d arrived after %d and was new: out of order", s, seqs[i-1])
		}
		seen[s] = true
	}
	for s := seqs[0]; s <= last; s++ {
		if !seen[s] {
			t.Errorf("seq %d never reached the subscriber (got %d..%d)", s, seqs[0], last)
		}
	}
}

// lastSeq is the newest event's seq, from the daemon's API.
func lastSeq(t *testing.T, data string) uint64 {
	t.Helper()
	sock := filepath.Join(data, "questbox.sock")
	c := api.NewClient(api.SocketClient(sock), sock)
	var since uint64
	for {
		page, err := c.Events(context.Background(), since, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Events) == 0 {
			return since
		}
		since = page.Events[len(page.Events)-1].Seq
	}
}

// TestAgentFloodingStdout: an agent that writes 64 MiB to stdout is cut at
// its output_cap, the try FAILs with a fact naming the cap, and the flood
// is drained, not kept: this process allocates far less than the flood.
func TestAgentFloodingStdout(t *testing.T) {
	data := dataDir(t)
	conf := filepath.Join(t.TempDir(), "questbox.toml")
	os.WriteFile(conf, []byte(`[providers.flood]
type = "command"
argv = ["/bin/sh", "-c", "cat >/dev/null; head -c 67108864 /dev/zero | tr '\\0' 'x'"]
env = ["PATH"]
timeout = "5m"
output_cap = "64KiB"
[network]
probe = ""
`), 0o644)
	d := []string{"--config", conf, "--data", data}
	must(t, 0, "", append([]string{"quest", "new", "flood", "--direction", "drown the box", "--provider", "flood", "--mode", "solo", "--roles", "scout,poc,strategist"}, d...)...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	must(t, 0, "", append([]string{"tick"}, d...)...)
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
		t.Errorf("a tick with a 64 MiB flood allocated %d MiB: the output is kept, not capped", grew>>20)
	}
	n := nodeOf(t, showQuest(t, data, "q1"), "n1")
	if n.Status != "pending" || n.Tries != 1 || n.Outcome != "FAIL" {
		t.Fatalf("after the flood: node %s, %d tries, outcome %q; want pending after one FAIL", n.Status, n.Tries, n.Outcome)
	}
	var capped bool
	for _, f := range n.Facts {
		capped = capped || strings.Contains(f.Text, "exceeded the cap of 65536 bytes")
	}
	if !capped {
		t.Errorf("no fact names the cap: %+v", n.Facts)
	}
	must(t, 0, "", append([]string{"verify"}, d...)...)
}
