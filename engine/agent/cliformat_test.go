//go:build linux

package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fakeCLI writes an executable named name into a fresh directory that
// prints stdout (a file beside it, so no shell quoting gets in the way),
// reads its stdin into prompt.txt there, and exits with code. It returns
// the program's path.
func fakeCLI(t *testing.T, name, stdout string, code int) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "out"), []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\ncat > \"$(dirname \"$0\")/prompt.txt\"\ncat \"$(dirname \"$0\")/out\"\nexit " + strconv.Itoa(code) + "\n"
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// The documented shapes: Claude Code's `-p --output-format json` result
// object, and Codex's `exec --json` event lines.
const (
	claudeOK = `{"type":"result","subtype":"success","is_error":false,"duration_ms":2300,"num_turns":2,` +
		`"result":"the answer\n` + "```json\\n{\\\"verdict\\\":\\\"dead\\\"}\\n```" + `","session_id":"s1","total_cost_usd":0.0123,` +
		`"usage":{"input_tokens":100,"cache_creation_input_tokens":20,"cache_read_input_tokens":30,"output_tokens":50}}` + "\n"
	claudeErr = `{"type":"result","subtype":"error_max_turns","is_error":true,"result":"hit the turn limit\nmore","total_cost_usd":0.5,` +
		`"usage":{"input_tokens":1000,"output_tokens":10}}`
	codexOK = `{"type":"thread.started","thread_id":"t1"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"thinking"}}
{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"ls","aggregated_output":"a\n","exit_code":0,"status":"completed"}}
{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"first"}}
{"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"the codex answer"}}
{"type":"turn.completed","usage":{"input_tokens":1200,"cached_input_tokens":200,"output_tokens":345}}
`
	codexFailed = `{"type":"thread.started","thread_id":"t1"}
{"type":"turn.started"}
{"type":"turn.failed","error":{"message":"stream disconnected before completion"}}
`
)

func TestCommandReadsCLIOutput(t *testing.T) {
	cases := []struct {
		name, format, out string
		code              int
		wantAnswer        string
		wantTokens        int
		wantReported      bool
		wantCost          float64
		wantErr           string // "" for none
		wantReportedErr   bool   // the error wraps ErrAgentReported
	}{
		{name: "claude ok", format: FormatClaudeJSON, out: claudeOK,
			wantAnswer: "the answer\n```json\n{\"verdict\":\"dead\"}\n```", wantTokens: 200, wantReported: true, wantCost: 0.0123},
		{name: "claude result after a warning line", format: FormatClaudeJSON, out: "warning: update available\n" + claudeOK,
			wantAnswer: "the answer\n```json\n{\"verdict\":\"dead\"}\n```", wantTokens: 200, wantReported: true, wantCost: 0.0123},
		{name: "claude is_error, exit 1", format: FormatClaudeJSON, out: claudeErr, code: 1,
			wantTokens: 1010, wantReported: true, wantCost: 0.5,
			wantErr: "error_max_turns: hit the turn limit", wantReportedErr: true},
		{name: "claude is_error, exit 0", format: FormatClaudeJSON, out: claudeErr,
			wantTokens: 1010, wantReported: true, wantCost: 0.5,
			wantErr: "error_max_turns: hit the turn limit", wantReportedErr: true},
		{name: "claude truncated", format: FormatClaudeJSON, out: claudeOK[:60],
			wantErr: "claude-code output is not its JSON result"},
		{name: "claude printed text", format: FormatClaudeJSON, out: "just text\n",
			wantErr: "is argv missing --output-format json"},
		{name: "claude non-zero exit without JSON keeps the exit status", format: FormatClaudeJSON, out: "boom\n", code: 3,
			wantErr: "exited with status 3"},
		{name: "codex ok", format: FormatCodexJSONL, out: codexOK,
			wantAnswer: "the codex answer", wantTokens: 1545, wantReported: true},
		{name: "codex turn failed", format: FormatCodexJSONL, out: codexFailed, code: 1,
			wantErr: "stream disconnected before completion", wantReportedErr: true},
		{name: "codex cut before the turn ended", format: FormatCodexJSONL, out: strings.Join(strings.Split(codexOK, "\n")[:5], "\n"),
			wantErr: "no turn.completed event"},
		{name: "codex cut inside a line", format: FormatCodexJSONL, out: codexOK[:len(codexOK)-30],
			wantErr: "line 7 is not a JSON event"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bin := fakeCLI(t, "cli", tc.out, tc.code)
			c := mustNewCommand(t, CommandConfig{Name: "p", Argv: []string{bin}, Format: tc.format})
			reply, err := c.Run(context.Background(), Request{Prompt: "the prompt"})
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				if got := string(reply.Output); got != tc.wantAnswer {
					t.Errorf("answer %q, want %q", got, tc.wantAnswer)
				}
			} else {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Run error %v, want one containing %q", err, tc.wantErr)
				}
				if got := errors.Is(err, ErrAgentReported); got != tc.wantReportedErr {
					t.Errorf("errors.Is(err, ErrAgentReported) = %v, want %v (err %v)", got, tc.wantReportedErr, err)
				}
				if !strings.Contains(err.Error(), `"p"`) {
					t.Errorf("error %v does not name the provider", err)
				}
			}
			if reply.TokensReported != tc.wantReported {
				t.Errorf("TokensReported %v, want %v", reply.TokensReported, tc.wantReported)
			}
			if tc.wantReported && reply.Tokens != tc.wantTokens {
				t.Errorf("Tokens %d, want %d", reply.Tokens, tc.wantTokens)
			}
			if !tc.wantReported && reply.Tokens != EstimateTokens("the prompt", reply.Output) {
				t.Errorf("Tokens %d, want the estimate %d", reply.Tokens, EstimateTokens("the prompt", reply.Output))
			}
			if reply.CostReported != (tc.wantCost != 0) || reply.CostUSD != tc.wantCost {
				t.Errorf("cost %v (reported %v), want %v", reply.CostUSD, reply.CostReported, tc.wantCost)
			}
			prompt, err := os.ReadFile(filepath.Join(filepath.Dir(bin), "prompt.txt"))
			if err != nil || string(prompt) != "the prompt" {
				t.Errorf("the CLI read %q (%v) on stdin, want the prompt", prompt, err)
			}
		})
	}
}

func TestCommandCLIOutputCutAtCap(t *testing.T) {
	bin := fakeCLI(t, "claude", claudeOK, 0)
	c := mustNewCommand(t, CommandConfig{Name: "p", Argv: []string{bin}, Format: FormatClaudeJSON, OutputCap: 40})
	_, err := c.Run(context.Background(), Request{Prompt: "x"})
	if err == nil || !strings.Contains(err.Error(), "cut at 40 bytes (output_cap)") {
		t.Fatalf("Run error %v, want the output cap named", err)
	}
}

func TestNewCommandRejectsUnknownFormat(t *testing.T) {
	_, err := NewCommand(CommandConfig{Name: "p", Argv: []string{"sh"}, Timeout: testTimeout, OutputCap: 1, Format: "yaml"})
	if err == nil || !strings.Contains(err.Error(), `"yaml"`) {
		t.Fatalf("NewCommand error %v, want the format named", err)
	}
}
