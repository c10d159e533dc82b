package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/questbox/questbox/internal/daemon/daemontest"
	"github.com/questbox/questbox/ui/api"
)

// TestNoSecretInAnyMessage runs the CLI on configurations full of
// secrets (a broker URL with a password, mqtt.password, a password file,
// an API key and a provider's env values, the last three from the
// environment) whose every problem makes a message, and greps all that it
// printed for the secret values.
func TestNoSecretInAnyMessage(t *testing.T) {
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "mqtt.pw")
	if err := os.WriteFile(pwFile, []byte("pwfile-S3CRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("QB_TEST_API_KEY", "apikey-S3CRET")
	t.Setenv("QB_TEST_TOKEN", "envval-S3CRET")
	secrets := []string{"brokerpw-S3CRET", "inline-S3CRET", "pwfile-S3CRET", "apikey-S3CRET", "envval-S3CRET"}
	providers := `
[providers.llm]
type = "openai"
base_url = "http://127.0.0.1:9/v1"
model = "m"
api_key_env = "QB_TEST_API_KEY"

[providers.agent]
type = "command"
argv = ["/nonexistent/envval-S3CRET-agent"]
env = ["PATH", "QB_TEST_TOKEN"]
`
	for name, file := range map[string]string{
		// The case: the ca_file message quoted the whole URL.
		"credentials in the broker URL": fmt.Sprintf("[mqtt]\nbroker = \"tcp://user:brokerpw-S3CRET@host:1883\"\nca_file = %q\npassword = \"inline-S3CRET\"\n%s", filepath.Join(dir, "ca.pem"), providers),
		// Valid, but the wiring fails: a missing CA file and program.
		"wiring": fmt.Sprintf("[network]\nprobe = \"\"\n[mqtt]\nbroker = \"ssl://127.0.0.1:9\"\nusername = \"u\"\npassword_file = %q\nca_file = %q\n%s", pwFile, filepath.Join(dir, "ca.pem"), providers),
		// An unknown key and a type error next to the secrets.
		"check": fmt.Sprintf("[mqtt]\nbroker = \"tcp://user:brokerpw-S3CRET@host:bad\"\npasword = \"inline-S3CRET\"\npassword = \"inline-S3CRET\"\noutbox_max = \"inline-S3CRET\"\n%s", providers),
	} {
		t.Run(name, func(t *testing.T) {
			cfg := writeConfig(t, file)
			var all []string
			for _, args := range [][]string{
				{"run", "--check-config"},
				{"quest", "list"},
				{"quest", "new", "x", "--direction", "d", "--provider", "agent"},
			} {
				r := qb(t, "", append(args, "--config", cfg, "--data", dataDir(t))...)
				all = append(all, r.stdout, r.stderr)
				if r.code == 0 && args[0] == "run" && name != "wiring" {
					t.Errorf("%v: exit 0, want the config refused", args)
				}
			}
			if name == "wiring" {
				// The daemon's own log, and the API's view of the broker.
				data := daemontest.ShortDir(t)
				d := startDaemon(t, data, "--gpio", "sim", "--config", cfg)
				waitFor(t, "the broker's error", func() bool {
					var v api.Device
					decode(t, must(t, 0, "", "device", "status", "--json", "--data", data, "--config", cfg), &v)
					return v.Broker.Error != ""
				})
				for _, args := range [][]string{{"device", "status", "--json"}, {"device", "status"}, {"quest", "new", "x", "--direction", "d", "--provider", "agent"}, {"tick"},
					{"quest", "show", "q1", "--json"}, {"quest", "list", "--json"}, {"status", "q1"}} {
					r := qb(t, "", append(args, "--data", data, "--config", cfg)...)
					all = append(all, r.stdout, r.stderr)
				}
				// The API's own answer, as the dashboard or a script gets it.
				agentName := "agent"
				c := api.NewClient(api.SocketClient(filepath.Join(data, "questbox.sock")), "daemon")
				_, err := c.NewQuest(context.Background(), api.NewQuest{Name: "y", Direction: "d", Provider: &agentName})
				all = append(all, fmt.Sprint(err))
				d.stop()
				all = append(all, d.stdout.String(), d.stderr.String())
				if !strings.Contains(d.stderr.String(), "xxxxx") {
					t.Errorf("the daemon's log masks nothing; the test does not reach a secret:\n%s", d.stderr.String())
				}
			}
			out := strings.Join(all, "\n")
			for _, s := range secrets {
				if strings.Contains(out, s) {
					t.Errorf("the output carries the secret %q:\n%s", s, out)
				}
			}
		})
	}
}
