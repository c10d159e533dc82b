package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// How a command's stdout is read (CommandConfig.Format).
const (
	// FormatText takes the whole stdout as the answer; tokens are
	// estimated (EstimateTokens).
	FormatText = ""
	// FormatClaudeJSON reads the one JSON object that Claude Code prints
	// with `-p --output-format json`: the answer in "result", the tokens
	// in "usage", the cost in "total_cost_usd", a failure in "is_error".
	FormatClaudeJSON = "claude-json"
	// FormatCodexJSONL reads the JSON lines that Codex prints with
	// `exec --json`: the answer is the last "agent_message" item, the
	// tokens are the sum of every "turn.completed" usage, a failure is a
	// "turn.failed" or "error" event. Codex reports no cost.
	FormatCodexJSONL = "codex-jsonl"
)

// ErrAgentReported is wrapped by the error of a run whose agent CLI said,
// in its own output, that it failed (Claude Code's is_error, Codex's
// turn.failed): the agent's failure, which consumes a try.
var ErrAgentReported = errors.New("the agent reported an error")

// validFormat reports whether f is one of the Format* names.
func validFormat(f string) bool {
	return f == FormatText || f == FormatClaudeJSON || f == FormatCodexJSONL
}

// decodeOutput turns a CLI's structured stdout into the answer, the
// tokens and the cost it reported, in place in reply. A stdout that is
// not the format's (a truncated stream, a CLI that printed text) is an
// error naming the format and what was missing; the reply then keeps the
// raw output so the run's record shows what came.
func decodeOutput(format string, reply *Reply) error {
	switch format {
	case FormatClaudeJSON:
		return decodeClaude(reply)
	case FormatCodexJSONL:
		return decodeCodex(reply)
	}
	return nil
}

// claudeResult is the part of Claude Code's result object that questbox
// reads. Cache reads and writes count as input: they are billed.
type claudeResult struct {
	Type         string   `json:"type"`
	Subtype      string   `json:"subtype"`
	IsError      bool     `json:"is_error"`
	Result       *string  `json:"result"`
	TotalCostUSD *float64 `json:"total_cost_usd"`
	Usage        *struct {
		InputTokens              int `json:"input_tokens"`
		CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int `json:"cache_read_input_tokens"`
		OutputTokens             int `json:"output_tokens"`
	} `json:"usage"`
}

func decodeClaude(reply *Reply) error {
	if reply.Truncated {
		return fmt.Errorf("claude-code output was cut at %d bytes (output_cap), so its JSON result cannot be read", reply.Cap)
	}
	var r claudeResult
	// The result is the whole output, or its last line: a CLI that
	// printed a warning first, or stream-json's events, come before it.
	if err := json.Unmarshal(reply.Output, &r); err != nil {
		if err := json.Unmarshal(lastLine(reply.Output), &r); err != nil {
			return fmt.Errorf("claude-code output is not its JSON result (is argv missing --output-format json, or was the stream cut?): %v", err)
		}
	}
	if r.Type != "result" && r.Type != "" {
		return fmt.Errorf("claude-code output ends with a %q object, not its result (was the stream cut?)", r.Type)
	}
	if r.Usage != nil {
		u := r.Usage
		reply.Tokens = u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens + u.OutputTokens
		reply.TokensReported = true
	}
	if r.TotalCostUSD != nil {
		reply.CostUSD, reply.CostReported = *r.TotalCostUSD, true
	}
	if r.IsError {
		what := r.Subtype
		if r.Result != nil && *r.Result != "" {
			what += ": " + firstLineOf(*r.Result)
		}
		return fmt.Errorf("claude-code: %w (%s)", ErrAgentReported, strings.TrimPrefix(what, ": "))
	}
	if r.Result == nil {
		return errors.New("claude-code result has no \"result\" field: no answer to read")
	}
	reply.Output = []byte(*r.Result)
	return nil
}

// codexEvent is one line of Codex's `exec --json` stream, the fields
// questbox reads.
type codexEvent struct {
	Type string `json:"type"`
	Item *struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"item"`
	Usage *struct {
		InputTokens       int `json:"input_tokens"`
		CachedInputTokens int `json:"cached_input_tokens"`
		OutputTokens      int `json:"output_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
	Message string `json:"message"`
}

func decodeCodex(reply *Reply) error {
	if reply.Truncated {
		return fmt.Errorf("codex output was cut at %d bytes (output_cap), so its event stream cannot be read to its end", reply.Cap)
	}
	var (
		answer    *string
		tokens    int
		reported  bool
		completed bool
		failure   string
	)
	for n, line := range bytes.Split(reply.Output, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var ev codexEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			return fmt.Errorf("codex output line %d is not a JSON event (is argv missing --json, or was the stream cut?): %v", n+1, err)
		}
		switch ev.Type {
		case "item.completed":
			if ev.Item != nil && ev.Item.Type == "agent_message" {
				text := ev.Item.Text
				answer = &text
			}
		case "turn.completed":
			completed = true
			if ev.Usage != nil {
				// cached_input_tokens are part of input_tokens.
				tokens += ev.Usage.InputTokens + ev.Usage.OutputTokens
				reported = true
			}
		case "turn.failed":
			failure = "turn failed"
			if ev.Error != nil && ev.Error.Message != "" {
				failure = ev.Error.Message
			}
		case "error":
			failure = ev.Message
			if failure == "" && ev.Error != nil {
				failure = ev.Error.Message
			}
		}
	}
	reply.Tokens, reply.TokensReported = tokens, reported
	switch {
	case failure != "":
		return fmt.Errorf("codex: %w (%s)", ErrAgentReported, firstLineOf(failure))
	case !completed:
		return errors.New("codex output has no turn.completed event: the stream was cut before the turn ended")
	case answer == nil:
		return errors.New("codex turn completed without an agent_message: no answer to read")
	}
	reply.Output = []byte(*answer)
	return nil
}

// lastLine is the last non-empty line of b.
func lastLine(b []byte) []byte {
	b = bytes.TrimRight(b, " \t\r\n")
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[i+1:]
	}
	return bytes.TrimSpace(b)
}

// firstLineOf is s's first line, at most 200 bytes: enough to say what
// failed in an error message.
func firstLineOf(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "") + "…"
	}
	return s
}
