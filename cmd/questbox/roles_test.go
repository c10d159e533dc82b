package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/questbox/questbox/internal/daemon/daemontest"
)

// quest new --role-provider and --egress: a provider of a vendor the
// quest does not allow is refused (exit 1) naming it and its vendor; an
// unknown role or provider is refused naming it; a malformed flag is a
// usage error.
func TestQuestNewRoleProviderAndEgress(t *testing.T) {
	cfg, data := writeConfig(t, daemontest.RolesConfig), t.TempDir()
	base := []string{"quest", "new", "q", "--direction", "find it", "--provider", "box", "--config", cfg, "--data", data}
	r := must(t, 1, "", append(base, "--role-provider", "owner=claude")...)
	if !strings.Contains(r.stderr, `role owner: provider "claude" is vendor "anthropic"`) {
		t.Errorf("refusal does not name the provider and its vendor:\n%s", r.stderr)
	}
	r = must(t, 1, "", append(base, "--role-provider", "owner=nope")...)
	if !strings.Contains(r.stderr, `role-provider owner=nope: provider "nope" is not configured`) {
		t.Errorf("refusal does not name the unknown provider:\n%s", r.stderr)
	}
	r = must(t, 1, "", append(base, "--role-provider", "chef=claude", "--egress", "local,anthropic")...)
	if !strings.Contains(r.stderr, `role "chef" is not one of the quest's roles`) {
		t.Errorf("refusal does not name the unknown role:\n%s", r.stderr)
	}
	must(t, 1, "", append(base, "--role-provider", "owner")...)
	must(t, 0, "", append(base, "--role-provider", "owner=claude", "--egress", "local", "--egress", "anthropic")...)
}

// run --check-config reads the roles' templates: an unreadable or broken
// one is reported naming its key, and a broken one its line and column;
// every verb that builds the engine (the daemon, tick here) refuses it
// the same way.
func TestCheckConfigRoleTemplates(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "broken.tmpl"), []byte("POC {{.Node.ID}}\n  {{.Node.Colour}}"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "questbox.toml")
	text := daemontest.RolesConfig + "\n[roles.owner]\nprovider = \"claude\"\ntemplate = \"missing.tmpl\"\n\n[roles.poc]\ntemplate = \"broken.tmpl\"\n"
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	r := must(t, 1, "", "run", "--check-config", "--config", cfg, "--data", t.TempDir())
	broken := "roles.poc.template: \"" + filepath.Join(dir, "broken.tmpl") + "\" is not a prompt template: broken.tmpl:2:3: .Node.Colour: PromptNode has no field Colour"
	for _, want := range []string{"roles.owner.template: \"" + filepath.Join(dir, "missing.tmpl") + "\" cannot be read", broken} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("check-config does not say %q:\n%s", want, r.stderr)
		}
	}
	if r := must(t, 1, "", "tick", "--config", cfg, "--data", t.TempDir()); !strings.Contains(r.stderr, broken) {
		t.Errorf("tick does not say %q:\n%s", broken, r.stderr)
	}
	if err := os.WriteFile(filepath.Join(dir, "missing.tmpl"), []byte("{{.Parts.Default}}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "broken.tmpl"), []byte("POC {{.Node.ID}}\n{{.Parts.Contract}}"), 0o644); err != nil {
		t.Fatal(err)
	}
	must(t, 0, "", "run", "--check-config", "--config", cfg, "--data", t.TempDir())
}

// With a command provider per role (different programs), each node runs
// on its role's program only, with the prompt its role defines: the
// owner's from its template, carrying the scout's evidence; the scout's
// the built-in one.
func TestRoleCommandProvidersEndToEnd(t *testing.T) {
	dir, out := t.TempDir(), agentOut(t)
	write := func(name, text string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("worker.out", "```json\n{\"verdict\": \"promising\", \"evidence\": \"the scout found the ledger in the archive\", \"citations\": [], \"new_directions\": [\"read the ledger\"]}\n```\n")
	write("owner.out", "```json\n{\"evidence\": \"the ledger settles the direction\", \"actions\": [{\"action\": \"finish\", \"summary\": \"found\"}]}\n```\n")
	write("owner.tmpl", "OWNER TEMPLATE for {{.Quest.ID}}, try {{.Node.Try}} of {{.Node.MaxTries}}\n{{.Parts.Locked}}{{.Parts.Proposals}}{{.Parts.Contract}}")
	cfg := write("questbox.toml", `
[defaults]
provider = "worker"
owner_every = 1

[providers.worker]
type = "command"
vendor = "local"
write = ["`+out+`"]
argv = ["/bin/sh", "-c", "cat >> '`+out+`/worker.in'; cat '`+dir+`/worker.out'"]

[providers.boss]
type = "command"
vendor = "local"
write = ["`+out+`"]
argv = ["/bin/sh", "-c", "cat >> '`+out+`/owner.in'; cat '`+dir+`/owner.out'"]

[roles.owner]
provider = "boss"
template = "owner.tmpl"
max_tries = 2
`)
	data := t.TempDir()
	args := []string{"--config", cfg, "--data", data}
	must(t, 0, "", append([]string{"quest", "new", "q", "--direction", "find the ledger"}, args...)...)
	for range 2 {
		must(t, 0, "", append([]string{"tick"}, args...)...)
	}
	worker, err := os.ReadFile(filepath.Join(out, "worker.in"))
	if err != nil {
		t.Fatal(err)
	}
	owner, err := os.ReadFile(filepath.Join(out, "owner.in"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(worker), "You are the "); n != 1 || !strings.Contains(string(worker), "You are the scout") || strings.Contains(string(worker), "OWNER TEMPLATE") {
		t.Errorf("the worker program got %d prompts, want the scout's only:\n%s", n, worker)
	}
	for _, want := range []string{"OWNER TEMPLATE for q1, try 1 of 2", "evidence: the scout found the ledger in the archive", "read the ledger", `"actions"`} {
		if !strings.Contains(string(owner), want) {
			t.Errorf("the owner program's prompt lacks %q:\n%s", want, owner)
		}
	}
	if strings.Contains(string(owner), "of questbox quest") {
		t.Errorf("the owner program got a built-in prompt:\n%s", owner)
	}
	r := must(t, 0, "", append([]string{"quest", "show", "q1"}, args...)...)
	if !strings.Contains(r.stdout, "done") {
		t.Errorf("quest show:\n%s\nwant the quest done by its owner", r.stdout)
	}
}
