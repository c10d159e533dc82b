package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/questbox/questbox/config"
	"github.com/questbox/questbox/engine"
)

const rolesConfig = `
[providers.claude]
type = "command"
argv = ["/bin/true"]
vendor = "anthropic"

[providers.box]
type = "command"
argv = ["/bin/true"]
vendor = "local"
`

// quest new --role-provider and --egress: a provider of a vendor the
// quest does not allow is refused (exit 1) naming it and its vendor; an
// unknown role or provider is refused naming it; a malformed flag is a
// usage error.
func TestQuestNewRoleProviderAndEgress(t *testing.T) {
	cfg, data := writeConfig(t, rolesConfig), t.TempDir()
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
// one is reported naming its key.
func TestCheckConfigRoleTemplates(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "broken.tmpl"), []byte("{{.Node.Colour}}"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "questbox.toml")
	text := rolesConfig + "\n[roles.owner]\nprovider = \"claude\"\ntemplate = \"missing.tmpl\"\n\n[roles.poc]\ntemplate = \"broken.tmpl\"\n"
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	r := must(t, 1, "", "run", "--check-config", "--config", cfg, "--data", t.TempDir())
	for _, want := range []string{"roles.owner.template: \"" + filepath.Join(dir, "missing.tmpl") + "\" cannot be read", "roles.poc.template: ", "Colour"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("check-config does not say %q:\n%s", want, r.stderr)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "missing.tmpl"), []byte("{{.Parts.Default}}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "broken.tmpl"), []byte("POC {{.Node.ID}}\n{{.Parts.Contract}}"), 0o644); err != nil {
		t.Fatal(err)
	}
	must(t, 0, "", "run", "--check-config", "--config", cfg, "--data", t.TempDir())
}

// The demo quest runs every role on the demo provider, even when [roles]
// gives one a provider of a vendor the demo quest would refuse.
func TestSeedDemoIgnoresRoleProviders(t *testing.T) {
	cfg, err := config.Parse([]byte(rolesConfig+"\n[roles.owner]\nprovider = \"claude\"\n"), "questbox.toml")
	if err != nil {
		t.Fatal(err)
	}
	st, err := engine.OpenStore(t.TempDir(), engine.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w := newWiring(cfg, func(string) string { return "" }, 0)
	opt, err := w.options(cfg, nil, st)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(st, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Shutdown(0)
	var out strings.Builder
	if err := seedDemo(&out, eng, cfg); err != nil {
		t.Fatal(err)
	}
	qs, err := eng.Quests()
	if err != nil || len(qs) != 1 {
		t.Fatalf("quests %v, %v; want the demo quest", qs, err)
	}
	if got := qs[0].RoleProviders[engine.RoleOwner]; got != engine.ProviderDemo {
		t.Errorf("the demo quest's owner runs on %q, want demo", got)
	}
}
