package main

import (
	"time"

	"github.com/questbox/questbox/ui/api"

	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine"
)

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "questbox.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestMisspelledConfigKey(t *testing.T) {
	cfg := writeConfig(t, "[daemon]\ntikc = \"5s\"\n")
	data := t.TempDir()
	for _, args := range [][]string{
		{"quest", "list", "--config", cfg, "--data", data},
		{"run", "--check-config", "--config", cfg, "--data", data},
	} {
		r := must(t, 1, "", args...)
		if !strings.Contains(r.stderr, "daemon.tikc") || !strings.HasPrefix(r.stderr, "questbox: ") {
			t.Errorf("%v: stderr %q does not name the key daemon.tikc", args, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(data, engine.StoreFile)); err == nil {
		t.Error("a bad config still opened the store")
	}
}

func TestConfigFromEnvironment(t *testing.T) {
	cfg := writeConfig(t, "[defaults]\nprovider = \"external\"\nmax_tries = 7\n")
	data := dataDir(t)
	t.Setenv("QUESTBOX_CONFIG", cfg)
	t.Setenv("QUESTBOX_DATA", data)
	var q api.Quest
	decode(t, must(t, 0, "", "quest", "new", "env", "--direction", "d", "--json"), &q)
	if q.Provider != "external" || q.Limits.MaxTries != 7 {
		t.Errorf("quest from env config: provider %q max_tries %d, want external 7", q.Provider, q.Limits.MaxTries)
	}
	// The flag wins over the environment: a directory without a store
	// is named as such, not listed from the environment's store.
	other := t.TempDir()
	r := must(t, 2, "", "quest", "list", "--json", "--data", other)
	if !strings.Contains(r.stderr, "no store at "+other) {
		t.Errorf("--data %s: %s, want it named as a directory without a store", other, r.stderr)
	}
}

func TestProviderNotOnPath(t *testing.T) {
	cfg := writeConfig(t, "[providers.ghost]\ntype = \"command\"\nargv = [\"questbox-no-such-agent\"]\n")
	data := dataDir(t)
	r := must(t, 1, "", "run", "--check-config", "--config", cfg, "--data", data)
	if !strings.Contains(r.stderr, "providers.ghost") || !strings.Contains(r.stderr, "questbox-no-such-agent") {
		t.Errorf("check-config said %q", r.stderr)
	}
	r = must(t, 1, "", "quest", "new", "g", "--direction", "d", "--provider", "ghost", "--config", cfg, "--data", data)
	if !strings.Contains(r.stderr, `provider "ghost" cannot run`) || !strings.Contains(r.stderr, "questbox-no-such-agent") {
		t.Errorf("quest new said %q", r.stderr)
	}
	r = must(t, 1, "", "quest", "new", "g", "--direction", "d", "--provider", "nobody", "--config", cfg, "--data", data)
	if !strings.Contains(r.stderr, `provider "nobody" is not configured`) {
		t.Errorf("quest new with an unknown provider said %q", r.stderr)
	}
	must(t, 0, "", "run", "--check-config", "--data", data)

	// An executable that disappears after the quest was created: the
	// engine stops the quest at run time with the message.
	agent := filepath.Join(t.TempDir(), "agent.sh")
	os.WriteFile(agent, []byte("#!/bin/sh\ncat\n"), 0o755)
	cfg = writeConfig(t, "[providers.flaky]\ntype = \"command\"\nargv = [\""+agent+"\"]\n")
	must(t, 0, "", "quest", "new", "f", "--direction", "d", "--provider", "flaky", "--config", cfg, "--data", data)
	os.Remove(agent)
	must(t, 0, "", "tick", "--config", cfg, "--data", data)
	var q api.Status
	decode(t, must(t, 0, "", "status", "q1", "--json", "--config", cfg, "--data", data), &q)
	if q.Status != api.QuestStopped || !strings.Contains(q.Reason, agent) {
		t.Errorf("quest on a vanished executable: %s (%s), want stopped naming %s", q.Status, q.Reason, agent)
	}
}

func TestUsageErrors(t *testing.T) {
	data := t.TempDir()
	must(t, 0, "", "quest", "new", "x", "--direction", "d", "--provider", "external", "--data", data)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no verb", nil, "no verb"},
		{"unknown verb", []string{"frobnicate"}, `unknown verb "frobnicate"`},
		{"quest alone", []string{"quest"}, "quest needs one of"},
		{"unknown flag", []string{"quest", "list", "--colour"}, "flag provided but not defined: -colour"},
		{"no direction", []string{"quest", "new", "x", "--data", data}, "--direction"},
		{"submit without node", []string{"submit", "q1", "--data", data}, "--node"},
		{"unknown quest", []string{"status", "q9", "--data", data}, "quest q9: not found"},
		{"unknown node", []string{"quest", "abort-node", "n9", "--data", data}, "n9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := must(t, 1, "", tc.args...)
			if !strings.Contains(r.stderr, tc.want) || strings.Count(r.stderr, "questbox: ") < 1 {
				t.Errorf("stderr %q, want it to mention %q", r.stderr, tc.want)
			}
		})
	}
	r := must(t, 0, "", "help")
	if !strings.Contains(r.stdout, "quest new") {
		t.Errorf("help printed %q", r.stdout)
	}
	r = must(t, 0, "", "version", "--json")
	if !strings.Contains(r.stdout, `"version": "dev"`) {
		t.Errorf("version printed %q", r.stdout)
	}
	must(t, 0, "", "rules", "--json")
}

// TestLockedStore: another process holds the store and no daemon answers;
// the CLI waits for one (shortened here from 30 s), saying so, then gives
// up after the lock timeout with exit 2.
func TestLockedStore(t *testing.T) {
	data := t.TempDir()
	st, err := engine.OpenStore(data, engine.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	defer func(d time.Duration) { daemonStartWait = d }(daemonStartWait)
	daemonStartWait = 1500 * time.Millisecond
	r := must(t, 2, "", "quest", "list", "--data", data)
	if !strings.Contains(r.stderr, "another process holds the store in "+data) {
		t.Errorf("stderr %q does not say what it waited for", r.stderr)
	}
	if !strings.Contains(r.stderr, "questbox store "+data+" is in use by another process") {
		t.Errorf("stderr %q", r.stderr)
	}
}

// TestCorruptStore: garbage in questbox.db is refused with exit 2 and the
// salvage command; salvage then gives a fresh, usable store.
func TestCorruptStore(t *testing.T) {
	data := t.TempDir()
	garbage := []byte(strings.Repeat("questbox is not a bbolt file. ", 400))
	if err := os.WriteFile(filepath.Join(data, engine.StoreFile), garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	// (`run` waits for the repair instead: storefault_test.go.)
	for _, args := range [][]string{{"quest", "list"}, {"verify"}} {
		r := must(t, 2, "", append(args, "--data", data)...)
		if !strings.Contains(r.stderr, "questbox salvage --data "+data) {
			t.Errorf("%v: stderr %q does not name the salvage command", args, r.stderr)
		}
	}
	r := must(t, 0, "", "salvage", "--data", data)
	if !strings.Contains(r.stdout, "lost:") || !strings.Contains(r.stdout, "everything") {
		t.Errorf("salvage of garbage printed:\n%s", r.stdout)
	}
	moved, _ := filepath.Glob(filepath.Join(data, engine.StoreFile+".corrupt-*"))
	if len(moved) != 1 {
		t.Fatalf("corrupt file moved to %v, want one questbox.db.corrupt-*", moved)
	}
	if b, _ := os.ReadFile(moved[0]); string(b) != string(garbage) {
		t.Error("the corrupt file was not kept as it was")
	}
	must(t, 0, "", "verify", "--data", data)
	must(t, 0, "", "quest", "new", "again", "--direction", "d", "--provider", "external", "--data", data)
}
