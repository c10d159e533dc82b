package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// newTestOpenAI starts an httptest server running handler and a provider
// pointed at its /v1.
func newTestOpenAI(t *testing.T, cfg OpenAIConfig, handler http.HandlerFunc) (*OpenAI, *httptest.Server) {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(func() {
		srv.CloseClientConnections() // ends a handler still waiting on its request
		srv.Close()
	})
	if cfg.BaseURL == "" {
		cfg.BaseURL = srv.URL + "/v1"
	}
	if cfg.Name == "" {
		cfg.Name = "local"
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = testTimeout
	}
	if cfg.OutputCap == 0 {
		cfg.OutputCap = 1 << 20
	}
	p, err := NewOpenAI(cfg)
	if err != nil {
		t.Fatalf("NewOpenAI: %v", err)
	}
	return p, srv
}

// answer writes a chat-completions response with one choice.
func answer(w http.ResponseWriter, content string, usage int) {
	resp := map[string]any{
		"model":   "served-model",
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": content}}},
	}
	if usage > 0 {
		resp["usage"] = map[string]any{"prompt_tokens": 1, "completion_tokens": usage - 1, "total_tokens": usage}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

func TestOpenAIRequestAndUsage(t *testing.T) {
	type seen struct {
		method, path, auth, ctype string
		body                      map[string]any
	}
	got := make(chan seen, 1)
	p, _ := newTestOpenAI(t, OpenAIConfig{Model: "qwen", APIKey: "sk-test", MaxTokens: 256},
		func(w http.ResponseWriter, r *http.Request) {
			var body map[string]any
			if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			got <- seen{r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("Content-Type"), body}
			answer(w, "the answer", 42)
		})

	reply, err := p.Run(context.Background(), Request{Prompt: "the prompt"})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	s := <-got
	checks := []struct {
		name      string
		got, want any
	}{
		{"method", s.method, "POST"},
		{"path", s.path, "/v1/chat/completions"},
		{"Authorization", s.auth, "Bearer sk-test"},
		{"Content-Type", s.ctype, "application/json"},
		{"model", s.body["model"], "qwen"},
		{"temperature", s.body["temperature"], 0.0},
		{"max_tokens", s.body["max_tokens"], 256.0},
		{"messages", fmt.Sprint(s.body["messages"]), "[map[content:the prompt role:user]]"},
		{"Output", string(reply.Output), "the answer"},
		{"Tokens", reply.Tokens, 42},
		{"TokensReported", reply.TokensReported, true},
		{"Model", reply.Model, "served-model"},
		{"Cap", reply.Cap, int64(1 << 20)},
		{"Truncated", reply.Truncated, false},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestOpenAIOmitsOptionalFields(t *testing.T) {
	got := make(chan map[string]any, 1)
	p, _ := newTestOpenAI(t, OpenAIConfig{}, func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		if r.Header.Get("Authorization") != "" {
			body["authorization-sent"] = true
		}
		got <- body
		answer(w, "ok", 0)
	})
	if _, err := p.Run(context.Background(), Request{Prompt: "p"}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	body := <-got
	for _, key := range []string{"model", "max_tokens", "authorization-sent"} {
		if _, ok := body[key]; ok {
			t.Errorf("request has %q although it was not configured: %v", key, body)
		}
	}
	if v, ok := body["temperature"]; !ok || v != 0.0 {
		t.Errorf("temperature: got %v (present %v), want 0", v, ok)
	}
}

func TestOpenAIEstimatesTokensWithoutUsage(t *testing.T) {
	p, _ := newTestOpenAI(t, OpenAIConfig{Model: "m"}, func(w http.ResponseWriter, r *http.Request) {
		answer(w, "twelve bytes", 0)
	})
	prompt := strings.Repeat("p", 100)
	reply, err := p.Run(context.Background(), Request{Prompt: prompt})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if want := (100 + 12) / 4; reply.Tokens != want || reply.TokensReported {
		t.Errorf("Tokens: got %d reported=%v, want %d estimated", reply.Tokens, reply.TokensReported, want)
	}
}

func TestOpenAILegacyTextChoice(t *testing.T) {
	p, _ := newTestOpenAI(t, OpenAIConfig{}, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"choices":[{"text":"legacy answer"}]}`)
	})
	reply, err := p.Run(context.Background(), Request{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if string(reply.Output) != "legacy answer" {
		t.Errorf("Output: got %q, want %q", reply.Output, "legacy answer")
	}
}

func TestOpenAIUnavailable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedURL := "http://" + l.Addr().String() + "/v1"
	l.Close() // nothing listens there now: connection refused

	p, err := NewOpenAI(OpenAIConfig{Name: "gone", BaseURL: closedURL, Timeout: testTimeout, OutputCap: 1024})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Run(context.Background(), Request{Prompt: "p"})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Run against a closed port: got %v, want ErrUnavailable", err)
	}
	if !strings.Contains(err.Error(), closedURL+"/chat/completions") || !strings.Contains(err.Error(), `"gone"`) {
		t.Errorf("error %q does not name the provider and URL", err)
	}
}

func TestOpenAIHTTPStatus(t *testing.T) {
	tests := []struct {
		status      int
		unavailable bool
	}{
		{http.StatusInternalServerError, true},
		{http.StatusBadGateway, true},
		{http.StatusServiceUnavailable, true},
		{http.StatusTooManyRequests, true},
		{http.StatusBadRequest, false},
		{http.StatusUnauthorized, false},
		{http.StatusNotFound, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			p, srv := newTestOpenAI(t, OpenAIConfig{APIKey: "sk-very-secret"}, func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				io.WriteString(w, "{\"error\": {\"message\": \"model   not\n\tloaded\"}}"+strings.Repeat(" padding", 10000))
			})
			_, err := p.Run(context.Background(), Request{Prompt: "p"})
			if err == nil {
				t.Fatalf("Run: got nil error for HTTP %d", tt.status)
			}
			if got := errors.Is(err, ErrUnavailable); got != tt.unavailable {
				t.Errorf("errors.Is(%q, ErrUnavailable): got %v, want %v", err, got, tt.unavailable)
			}
			msg := err.Error()
			for _, want := range []string{fmt.Sprintf("HTTP %d", tt.status), `model not loaded`, srv.URL} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not contain %q", msg, want)
				}
			}
			if strings.Contains(msg, "sk-very-secret") {
				t.Errorf("error %q leaks the API key", msg)
			}
			if len(msg) > 1024 {
				t.Errorf("error is %d bytes long; the body excerpt is not bounded", len(msg))
			}
		})
	}
}

func TestOpenAIBadResponses(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string
	}{
		{"malformed JSON", `{"choices": [`, "malformed JSON response"},
		{"not JSON", `<html>proxy error</html>`, "malformed JSON response"},
		{"no choices", `{"choices": []}`, "no choices"},
		{"missing choices", `{"id": "x"}`, "no choices"},
		{"error object", `{"error": {"message": "context length exceeded"}}`, "context length exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := newTestOpenAI(t, OpenAIConfig{}, func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, tt.body)
			})
			_, err := p.Run(context.Background(), Request{})
			if err == nil {
				t.Fatalf("Run: got nil error for body %q", tt.body)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
			if errors.Is(err, ErrUnavailable) {
				t.Errorf("error %q wraps ErrUnavailable; a bad answer is the agent's failure", err)
			}
		})
	}
}

func TestOpenAIOversizeBody(t *testing.T) {
	const outCap = 1024
	p, _ := newTestOpenAI(t, OpenAIConfig{OutputCap: outCap}, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"choices":[{"message":{"content":"`)
		chunk := []byte(strings.Repeat("a", 64<<10))
		for range 160 { // 10 MiB, far past the 68 KiB limit
			if _, err := w.Write(chunk); err != nil {
				return // the client stopped reading
			}
		}
		io.WriteString(w, `"}}]}`)
	})
	_, err := p.Run(context.Background(), Request{})
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("Run: got %v, want a body-too-large error", err)
	}
	if errors.Is(err, ErrUnavailable) {
		t.Errorf("error %q wraps ErrUnavailable", err)
	}
}

func TestOpenAIOutputCapped(t *testing.T) {
	const outCap = 1000
	p, _ := newTestOpenAI(t, OpenAIConfig{OutputCap: outCap}, func(w http.ResponseWriter, r *http.Request) {
		answer(w, strings.Repeat("z", 3*outCap), 7) // body within the limit, content past the cap
	})
	reply, err := p.Run(context.Background(), Request{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(reply.Output) != outCap || !reply.Truncated {
		t.Errorf("Output: got %d bytes truncated=%v, want %d truncated=true", len(reply.Output), reply.Truncated, outCap)
	}
}

// hang is a handler for a model that never finishes. It reads the request
// body first: only then does net/http notice a client hanging up.
func hang(arrived chan<- struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if arrived != nil {
			close(arrived)
		}
		<-r.Context().Done()
	}
}

func TestOpenAITimeout(t *testing.T) {
	p, _ := newTestOpenAI(t, OpenAIConfig{Timeout: 50 * time.Millisecond}, hang(nil))
	_, err := p.Run(context.Background(), Request{})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("Run: got %v, want ErrTimeout", err)
	}
	if errors.Is(err, ErrUnavailable) {
		t.Errorf("error %q wraps ErrUnavailable too", err)
	}
}

func TestOpenAICancel(t *testing.T) {
	arrived := make(chan struct{})
	p, _ := newTestOpenAI(t, OpenAIConfig{}, hang(arrived))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := p.Run(ctx, Request{})
		errc <- err
	}()
	<-arrived
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) || errors.Is(err, ErrUnavailable) {
		t.Fatalf("Run: got %v, want only context.Canceled", err)
	}
}

func TestOpenAIConcurrentRuns(t *testing.T) {
	p, _ := newTestOpenAI(t, OpenAIConfig{}, func(w http.ResponseWriter, r *http.Request) {
		var req chatRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		answer(w, "echo: "+req.Messages[0].Content, 0)
	})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			prompt := fmt.Sprint("prompt ", i)
			reply, err := p.Run(context.Background(), Request{Prompt: prompt})
			if err != nil {
				t.Errorf("Run %d: %v", i, err)
				return
			}
			if want := "echo: " + prompt; string(reply.Output) != want {
				t.Errorf("Run %d: got %q, want %q", i, reply.Output, want)
			}
		})
	}
	wg.Wait()
}

func TestNewOpenAIValidates(t *testing.T) {
	ok := OpenAIConfig{Name: "p", BaseURL: "http://127.0.0.1:8080/v1", Timeout: time.Second, OutputCap: 1}
	tests := []struct {
		name   string
		modify func(*OpenAIConfig)
		want   string
	}{
		{"empty URL", func(c *OpenAIConfig) { c.BaseURL = "" }, "base URL"},
		{"no scheme", func(c *OpenAIConfig) { c.BaseURL = "127.0.0.1:8080" }, "base URL"},
		{"ftp", func(c *OpenAIConfig) { c.BaseURL = "ftp://host/v1" }, "want http(s)"},
		{"no host", func(c *OpenAIConfig) { c.BaseURL = "http:///v1" }, "want http(s)"},
		{"password redacted", func(c *OpenAIConfig) { c.BaseURL = "ftp://u:hunter2@host" }, "u:xxxxx@host"},
		{"zero timeout", func(c *OpenAIConfig) { c.Timeout = 0 }, "timeout must be positive"},
		{"zero cap", func(c *OpenAIConfig) { c.OutputCap = 0 }, "output cap"},
		{"negative max tokens", func(c *OpenAIConfig) { c.MaxTokens = -1 }, "max tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ok
			tt.modify(&cfg)
			_, err := NewOpenAI(cfg)
			if err == nil {
				t.Fatalf("NewOpenAI: got nil error, want one containing %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewOpenAI error: got %q, want it to contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error %q leaks the URL's password", err)
			}
		})
	}
	if _, err := NewOpenAI(ok); err != nil {
		t.Errorf("NewOpenAI(valid): %v", err)
	}
}
