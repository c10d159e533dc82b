package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/questbox/questbox/internal/daemon/daemontest"
)

// A command agent, run by the daemon's wiring (here `tick`'s in-process
// engine), writes its project and nothing else, and cannot read or list
// the data directory or read the config file.
func TestCommandAgentRunsConfined(t *testing.T) {
	dir := daemontest.ShortDir(t)
	data := filepath.Join(dir, "data")
	project, outside := filepath.Join(dir, "project"), filepath.Join(dir, "outside")
	for _, d := range []string{project, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(dir, "questbox.toml")
	try := func(what, cmd string) string {
		return "{ " + cmd + "; } >/dev/null 2>&1 && echo '" + what + ": done' >&2 || echo '" + what + ": refused' >&2; "
	}
	script := "cat >/dev/null; " +
		try("project", "echo x > "+project+"/answer") +
		try("outside", "echo x > "+outside+"/escape") +
		try("store", "cat "+data+"/questbox.db") +
		try("data", "ls "+data) +
		try("config", "cat "+cfg)
	runsConfig(t, dir, "[providers.nosy]\ntype = \"command\"\nvendor = \"local\"\nargv = [\"sh\", \"-c\", \""+script+"\"]\n")
	d := []string{"--config", cfg, "--data", data}
	must(t, 0, "", append([]string{"quest", "new", "p", "--direction", "reach for the secrets", "--provider", "nosy", "--mode", "solo", "--max-tries", "1", "--project", project}, d...)...)
	must(t, 0, "", append([]string{"tick"}, d...)...)
	log := must(t, 0, "", append([]string{"logs", "n1"}, d...)...).stdout
	for _, want := range []string{"project: done", "outside: refused", "store: refused", "data: refused", "config: refused"} {
		if !strings.Contains(log, want) {
			t.Errorf("the agent's log does not say %q:\n%s", want, log)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "escape")); err == nil {
		t.Error("the agent wrote outside its project")
	}
}

// A program gate rule runs the agent's answer through a program: that
// program is confined too (it cannot read the store), with no network.
func TestProgramRuleRunsConfined(t *testing.T) {
	data := dataDir(t)
	conf := writeConfig(t, `
[network]
probe = ""

[[gates.probe.rules]]
id = "contract"
kind = "contract"
level = "fail"

[[gates.probe.rules]]
id = "reach"
kind = "program"
level = "fail"
params = { argv = ["sh", "-c", "cat >/dev/null; cat `+data+`/questbox.db >/dev/null 2>&1 && echo store: READ || echo store: refused"], expect = "stdout_contains", contains = "store: refused", timeout = "30s" }
`)
	cmd := func(args ...string) []string { return append(args, "--data", data, "--config", conf) }
	must(t, 0, "", cmd("quest", "new", "p", "--direction", "a program reads the answer", "--provider", "external", "--gate", "probe")...)
	must(t, 0, "", cmd("scan", "q1", "an answer for the program")...)
	r := must(t, 0, answer("dead", "the program rule must not reach the store of the box"), cmd("submit", "q1", "--node", "n1")...)
	if !strings.HasPrefix(r.stdout, "PASS") {
		t.Errorf("submit: %s", r.stdout)
	}
}
