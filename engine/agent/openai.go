package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"time"
)

// errorExcerpt bounds how much of an error response is read and quoted.
const errorExcerpt = 512

// OpenAIConfig configures an OpenAI provider.
type OpenAIConfig struct {
	// Name is the provider's name in the config file, used in error messages.
	Name string
	// BaseURL is the API root, e.g. "http://127.0.0.1:8080/v1"; the provider
	// POSTs to BaseURL + "/chat/completions".
	BaseURL string
	// Model is sent as "model"; empty omits it (llama.cpp serves one model).
	Model string
	// APIKey, when set, is sent as "Authorization: Bearer <key>". It never
	// appears in an error message.
	APIKey string
	// Timeout bounds one Run, from connecting to reading the whole answer.
	Timeout time.Duration
	// OutputCap bounds the completion text kept, in bytes (at most
	// MaxOutputCap). The response body itself is read up to
	// 4*OutputCap + 64 KiB, room for JSON escaping and metadata; a larger
	// body is an error, never buffered.
	OutputCap int64
	// MaxTokens is sent as "max_tokens" when positive.
	MaxTokens int
	// Client sends the requests; nil means a client of its own with Timeout.
	Client *http.Client
}

// OpenAI is a provider that asks an OpenAI-compatible chat-completions
// endpoint (llama.cpp, Ollama, vLLM, hosted APIs) with the prompt as a single
// user message at temperature 0.
//
// Errors: a transport failure (refused, DNS, TLS, reset), HTTP 429 or 5xx
// wraps ErrUnavailable; no answer within Timeout once connected wraps
// ErrTimeout, like a command that ran too long; any other HTTP status, a
// malformed or oversized body, or a response without choices is a plain error
// (the agent's failure).
//
// An OpenAI is safe for concurrent Run calls.
type OpenAI struct {
	cfg      OpenAIConfig // immutable after NewOpenAI
	endpoint string       // BaseURL + "/chat/completions"
	shown    string       // endpoint with any password redacted, for messages
	client   *http.Client
}

// NewOpenAI validates cfg.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("openai provider %q: base URL: %w", cfg.Name, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai provider %q: base URL %q: want http(s)://host[:port]/path", cfg.Name, u.Redacted())
	}
	if cfg.Timeout <= 0 {
		return nil, fmt.Errorf("openai provider %q: timeout must be positive, got %v", cfg.Name, cfg.Timeout)
	}
	if cfg.OutputCap <= 0 || cfg.OutputCap > MaxOutputCap {
		return nil, fmt.Errorf("openai provider %q: output cap must be in 1..%d bytes, got %d", cfg.Name, MaxOutputCap, cfg.OutputCap)
	}
	if cfg.MaxTokens < 0 {
		return nil, fmt.Errorf("openai provider %q: max tokens must not be negative, got %d", cfg.Name, cfg.MaxTokens)
	}
	u = u.JoinPath("chat", "completions")
	p := &OpenAI{cfg: cfg, endpoint: u.String(), shown: u.Redacted(), client: cfg.Client}
	if p.client == nil {
		p.client = &http.Client{Timeout: cfg.Timeout}
	}
	return p, nil
}

// Name returns the provider's name.
func (p *OpenAI) Name() string { return p.cfg.Name }

// bodyLimit is the most of a successful response body that is read.
func (p *OpenAI) bodyLimit() int64 { return 4*p.cfg.OutputCap + 64<<10 }

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatRequest struct {
	Model       string        `json:"model,omitempty"`
	Messages    []chatMessage `json:"messages"`
	MaxTokens   int           `json:"max_tokens,omitempty"`
	Temperature float64       `json:"temperature"` // always sent: 0 is the point
}

type chatResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
		} `json:"message"`
		Text *string `json:"text"` // legacy completions shape, served by some local servers
	} `json:"choices"`
	Usage *struct {
		TotalTokens int `json:"total_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// Run sends req.Prompt and returns the first choice's content.
func (p *OpenAI) Run(ctx context.Context, req Request) (Reply, error) {
	reply := Reply{Cap: p.cfg.OutputCap, Model: p.cfg.Model}
	body, err := json.Marshal(chatRequest{
		Model:     p.cfg.Model,
		Messages:  []chatMessage{{Role: "user", Content: req.Prompt}},
		MaxTokens: p.cfg.MaxTokens,
	})
	if err != nil {
		return reply, fmt.Errorf("BUG: openai provider %q: encoding request: %w", p.cfg.Name, err)
	}

	runCtx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	// The request is under way once written; the wait for the answer
	// after that is the vendor's.
	var once sync.Once
	traced := httptrace.WithClientTrace(runCtx, &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) { once.Do(req.started) },
	})
	httpReq, err := http.NewRequestWithContext(traced, http.MethodPost, p.endpoint, bytes.NewReader(body))
	if err != nil {
		return reply, fmt.Errorf("openai provider %q: POST %s: %w", p.cfg.Name, p.shown, err)
	}
	httpReq.Header.Set("Content-Type", "application/json")
	httpReq.Header.Set("Accept", "application/json")
	if p.cfg.APIKey != "" {
		httpReq.Header.Set("Authorization", "Bearer "+p.cfg.APIKey)
	}

	resp, err := p.client.Do(httpReq)
	if err != nil {
		return reply, p.transportError(ctx, runCtx, err)
	}
	defer resp.Body.Close()

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		excerpt := readExcerpt(resp.Body)
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
			return reply, fmt.Errorf("openai provider %q: POST %s: HTTP %d%s: %w", p.cfg.Name, p.shown, resp.StatusCode, excerpt, ErrUnavailable)
		}
		return reply, fmt.Errorf("openai provider %q: POST %s: HTTP %d%s", p.cfg.Name, p.shown, resp.StatusCode, excerpt)
	}

	limit := p.bodyLimit()
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		// The server answered, then the connection failed or we ran out of time.
		return reply, p.transportError(ctx, runCtx, err)
	}
	if int64(len(data)) > limit {
		return reply, fmt.Errorf("openai provider %q: POST %s: response body larger than %d bytes (4 × output cap + 64 KiB)", p.cfg.Name, p.shown, limit)
	}

	var cr chatResponse
	if err := json.Unmarshal(data, &cr); err != nil {
		return reply, fmt.Errorf("openai provider %q: POST %s: malformed JSON response (%v): %s", p.cfg.Name, p.shown, err, excerptOf(data))
	}
	if cr.Error != nil && len(cr.Choices) == 0 {
		return reply, fmt.Errorf("openai provider %q: POST %s: response reports an error: %s", p.cfg.Name, p.shown, excerptOf([]byte(cr.Error.Message)))
	}
	if len(cr.Choices) == 0 {
		return reply, fmt.Errorf("openai provider %q: POST %s: response has no choices: %s", p.cfg.Name, p.shown, excerptOf(data))
	}
	var content string
	switch c := cr.Choices[0]; {
	case c.Message.Content != nil:
		content = *c.Message.Content
	case c.Text != nil:
		content = *c.Text
	}

	out := newCapBuffer(p.cfg.OutputCap)
	_, _ = out.Write([]byte(content))
	reply.Output = out.bytes()
	reply.Truncated = out.truncated
	if cr.Model != "" {
		reply.Model = cr.Model
	}
	if cr.Usage != nil && cr.Usage.TotalTokens > 0 {
		reply.Tokens, reply.TokensReported = cr.Usage.TotalTokens, true
	} else {
		reply.Tokens = EstimateTokens(req.Prompt, reply.Output)
	}
	return reply, nil
}

// transportError classifies a failure to get an answer: the caller's ctx,
// our own timeout once connected (ErrTimeout, as for a slow command), or the
// endpoint being unreachable (ErrUnavailable).
func (p *OpenAI) transportError(ctx, runCtx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("openai provider %q: POST %s: %w", p.cfg.Name, p.shown, ctx.Err())
	}
	var opErr *net.OpError
	connecting := errors.As(err, &opErr) && opErr.Op == "dial"
	var urlErr *url.Error
	isURLErr := errors.As(err, &urlErr)
	timedOut := runCtx.Err() != nil || (isURLErr && urlErr.Timeout())
	if timedOut && !connecting {
		return fmt.Errorf("openai provider %q: POST %s: no answer within %v: %w", p.cfg.Name, p.shown, p.cfg.Timeout, ErrTimeout)
	}
	if isURLErr {
		err = urlErr.Err // url.Error repeats method and URL
	}
	return fmt.Errorf("openai provider %q: POST %s: %v: %w", p.cfg.Name, p.shown, err, ErrUnavailable)
}

// readExcerpt reads at most errorExcerpt bytes of an error body and returns
// them as ": <text>", or "" if empty.
func readExcerpt(r io.Reader) string {
	data, _ := io.ReadAll(io.LimitReader(r, errorExcerpt+1))
	if s := excerptOf(data); s != "" {
		return ": " + s
	}
	return ""
}

// excerptOf returns data as one short line of valid UTF-8, safe to quote in
// a message.
func excerptOf(data []byte) string {
	more := ""
	if len(data) > errorExcerpt {
		data, more = data[:errorExcerpt], "…"
	}
	s := strings.ToValidUTF8(string(data), "\uFFFD") // a rune cut in half included
	return strings.Join(strings.Fields(s), " ") + more
}
