package config

import (
	"slices"
	"strings"
	"testing"
)

func TestAgentCLIPresets(t *testing.T) {
	cases := []struct {
		name, file string
		argv       []string
		env        []string
		vendor     string
		format     string
	}{
		{name: "claude-code defaults", file: "[providers.c]\ntype = \"claude-code\"\n",
			argv: []string{"claude", "-p", "--output-format", "json"}, env: []string{"PATH", "HOME", "LANG", "ANTHROPIC_API_KEY", "CLAUDE_CONFIG_DIR"},
			vendor: "anthropic", format: "claude-json"},
		{name: "claude-code model", file: "[providers.c]\ntype = \"claude-code\"\nmodel = \"sonnet\"\n",
			argv: []string{"claude", "-p", "--output-format", "json", "--model", "sonnet"}, env: []string{"PATH", "HOME", "LANG", "ANTHROPIC_API_KEY", "CLAUDE_CONFIG_DIR"},
			vendor: "anthropic", format: "claude-json"},
		{name: "codex model goes before the stdin dash", file: "[providers.x]\ntype = \"codex\"\nmodel = \"gpt-5-codex\"\nenv = [\"PATH\"]\nvendor = \"work\"\n",
			argv: []string{"codex", "exec", "--json", "--skip-git-repo-check", "--model", "gpt-5-codex", "-"}, env: []string{"PATH"},
			vendor: "work", format: "codex-jsonl"},
		{name: "argv replaces the preset's", file: "[providers.c]\ntype = \"claude-code\"\nargv = [\"/opt/claude\", \"-p\", \"--output-format\", \"json\", \"--max-turns\", \"3\"]\n",
			argv: []string{"/opt/claude", "-p", "--output-format", "json", "--max-turns", "3"}, env: []string{"PATH", "HOME", "LANG", "ANTHROPIC_API_KEY", "CLAUDE_CONFIG_DIR"},
			vendor: "anthropic", format: "claude-json"},
		{name: "a command provider is as it was", file: "[providers.p]\ntype = \"command\"\nargv = [\"agent\"]\n",
			argv: []string{"agent"}, env: []string{"PATH", "HOME", "LANG"}, vendor: "p", format: ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(tc.file), "questbox.toml")
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			for name, p := range c.Providers {
				if !p.RunsCommand() {
					t.Errorf("%s does not run a command", name)
				}
				if got := p.CommandArgv(); !slices.Equal(got, tc.argv) {
					t.Errorf("argv %q, want %q", got, tc.argv)
				}
				if !slices.Equal(p.Env, tc.env) {
					t.Errorf("env %q, want %q", p.Env, tc.env)
				}
				if got := c.VendorOf(name); got != tc.vendor {
					t.Errorf("vendor %q, want %q", got, tc.vendor)
				}
				if got := p.OutputFormat(); got != tc.format {
					t.Errorf("format %q, want %q", got, tc.format)
				}
			}
		})
	}
}

func TestAgentCLIPresetProblems(t *testing.T) {
	cases := []struct{ name, file, want string }{
		{"argv without the output flag", "[providers.c]\ntype = \"claude-code\"\nargv = [\"claude\", \"-p\"]\n",
			`providers.c.argv: a claude-code provider's argv must keep ["--output-format"]`},
		{"codex argv without --json", "[providers.x]\ntype = \"codex\"\nargv = [\"codex\", \"exec\", \"-\"]\n",
			`providers.x.argv: a codex provider's argv must keep ["--json"]`},
		{"model with argv", "[providers.c]\ntype = \"claude-code\"\nmodel = \"opus\"\nargv = [\"claude\", \"-p\", \"--output-format\", \"json\"]\n",
			"providers.c.model: is added to the default command line only"},
		{"openai's fields", "[providers.c]\ntype = \"claude-code\"\nbase_url = \"http://x/v1\"\n",
			`providers.c.base_url: only applies to openai providers, and this one is type = "claude-code"`},
		{"unknown type names the presets", "[providers.c]\ntype = \"claude\"\n",
			`"claude" is not one of command, openai, claude-code, codex`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.file), "questbox.toml")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
