package config

import "slices"

// Agent CLI presets: provider types that run a known agent command line
// and read its structured output, so that its answer, tokens and cost are
// what the CLI reported rather than its whole stdout and an estimate.
const (
	// TypeClaudeCode runs Claude Code headless: `claude -p
	// --output-format json`, the prompt on stdin.
	TypeClaudeCode = "claude-code"
	// TypeCodex runs the Codex CLI headless: `codex exec --json -`, the
	// prompt on stdin.
	TypeCodex = "codex"
)

// Output formats of command providers (agent.CommandConfig.Format names
// the same strings).
const (
	formatClaudeJSON = "claude-json"
	formatCodexJSONL = "codex-jsonl"
)

// preset is what a preset type fills in when the provider's table does
// not say.
type preset struct {
	argv   []string // the command line; the model flag goes before a trailing "-"
	env    []string // the environment allow-list
	vendor string   // who receives the prompts
	format string   // how stdout is read
	needs  []string // argv must hold these words for its output to be read
}

// presetOf is the preset of provider type t, and whether t is one.
func presetOf(t string) (preset, bool) {
	switch t {
	case TypeClaudeCode:
		return preset{
			argv:   []string{"claude", "-p", "--output-format", "json"},
			env:    append(defaultEnv(), "ANTHROPIC_API_KEY", "CLAUDE_CONFIG_DIR"),
			vendor: "anthropic",
			format: formatClaudeJSON,
			needs:  []string{"--output-format"},
		}, true
	case TypeCodex:
		return preset{
			argv:   []string{"codex", "exec", "--json", "--skip-git-repo-check", "-"},
			env:    append(defaultEnv(), "OPENAI_API_KEY", "CODEX_HOME"),
			vendor: "openai",
			format: formatCodexJSONL,
			needs:  []string{"--json"},
		}, true
	}
	return preset{}, false
}

// RunsCommand reports whether the provider runs a program: a command
// provider or an agent CLI preset.
func (p Provider) RunsCommand() bool {
	_, ok := presetOf(p.Type)
	return ok || p.Type == TypeCommand
}

// CommandArgv is the command line the provider runs: argv as configured,
// or a preset's own with `--model MODEL` when model is set.
func (p Provider) CommandArgv() []string {
	pr, ok := presetOf(p.Type)
	if !ok || len(p.Argv) > 0 {
		return slices.Clone(p.Argv)
	}
	argv := slices.Clone(pr.argv)
	if p.Model != "" {
		at := len(argv)
		if argv[at-1] == "-" {
			at--
		}
		argv = slices.Insert(argv, at, "--model", p.Model)
	}
	return argv
}

// OutputFormat is how the provider's stdout is read: "" (the answer as
// printed) for a command provider, the preset's structured format else.
func (p Provider) OutputFormat() string {
	pr, _ := presetOf(p.Type)
	return pr.format
}
