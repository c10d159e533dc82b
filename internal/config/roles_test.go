package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const rolesFile = `
[providers.claude]
type = "command"
argv = ["/bin/true"]
vendor = "anthropic"

[providers.box]
type = "openai"
base_url = "http://127.0.0.1:8081/v1"
model = "m"

[roles.owner]
provider = "claude"
template = "owner.tmpl"
max_tries = 2
evidence_cap = "16KiB"

[roles.poc]
provider = "box"

[privacy]
redact = ["sk-[0-9]+"]
`

func TestRolesParse(t *testing.T) {
	c, err := Parse([]byte(rolesFile), "/etc/questbox/questbox.toml")
	if err != nil {
		t.Fatal(err)
	}
	if r := c.Roles["owner"]; r.Provider != "claude" || r.MaxTries != 2 || r.EvidenceCap != 16*KiB {
		t.Errorf("roles.owner = %+v", r)
	}
	if got := c.TemplatePath("owner"); got != "/etc/questbox/owner.tmpl" {
		t.Errorf("template path %q, want it next to the config file", got)
	}
	for prov, want := range map[string]string{"claude": "anthropic", "box": "box", "demo": "local", "external": "local"} {
		if got := c.VendorOf(prov); got != want {
			t.Errorf("vendor of %s: %q, want %q", prov, got, want)
		}
	}
	if res := c.RedactPatterns(); len(res) != 1 || !res[0].MatchString("sk-123") {
		t.Errorf("redact patterns %v", res)
	}
}

func TestRolesInvalid(t *testing.T) {
	for _, tc := range []struct {
		name, file, want string
	}{
		{"unknown provider", "[roles.owner]\nprovider = \"nope\"\n", `roles.owner.provider: "nope" is not a provider`},
		{"bad role name", "[roles.Owner]\nmax_tries = 1\n", `roles.Owner: role "Owner" is not a lower-case name`},
		{"negative max_tries", "[roles.poc]\nmax_tries = -1\n", `roles.poc.max_tries: -1 is negative`},
		{"evidence cap not owner", "[roles.poc]\nevidence_cap = \"1KiB\"\n", `roles.poc.evidence_cap: only applies to [roles.owner]`},
		{"empty template", "[roles.poc]\ntemplate = \" \"\n", `roles.poc.template: empty`},
		{"unknown key", "[roles.poc]\nprompt = \"x\"\n", `roles.poc.prompt`},
		{"bad regexp", "[privacy]\nredact = [\"a(b\"]\n", `privacy.redact[0]: "a(b" is not a regular expression`},
		{"empty regexp", "[privacy]\nredact = [\"\"]\n", `privacy.redact[0]: empty`},
		{"bad vendor", "[providers.x]\ntype = \"command\"\nargv = [\"/bin/true\"]\nvendor = \"Open AI\"\n", `providers.x.vendor: "Open AI" must match`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.file), "questbox.toml")
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

func TestRoleOptionsTemplates(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("good.tmpl", "{{.Parts.Default}}")
	write("broken.tmpl", "{{.Node.ID")
	write("unknown.tmpl", "{{.Node.Colour}}")
	write("function.tmpl", "Hi.\n  {{len .Ancestors}}")
	parse := func(role, tmpl string) *Config {
		t.Helper()
		c, err := Parse([]byte("[roles."+role+"]\ntemplate = \""+tmpl+"\"\nmax_tries = 4\n"), filepath.Join(dir, "questbox.toml"))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ro, err := parse("owner", "good.tmpl").RoleOptions(nil)
	if err != nil || ro["owner"].Prompt == nil || ro["owner"].MaxTries != 4 {
		t.Fatalf("good template: %+v, %v", ro, err)
	}
	for _, tc := range []struct{ tmpl, want string }{
		{"missing.tmpl", "roles.poc.template: \"" + filepath.Join(dir, "missing.tmpl") + "\" cannot be read"},
		{"broken.tmpl", "is not a prompt template: broken.tmpl:1:1: unclosed action"},
		{"unknown.tmpl", "unknown.tmpl:1:1: .Node.Colour: PromptNode has no field Colour"},
		{"function.tmpl", "function.tmpl:2:3: {{len .Ancestors}}: functions (len) are not supported"},
	} {
		_, err := parse("poc", tc.tmpl).RoleOptions(nil)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error saying %q", tc.tmpl, err, tc.want)
		}
	}
}
