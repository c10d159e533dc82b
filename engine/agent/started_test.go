package agent

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// A command's Started comes once its process runs, before it answers: the
// child here answers only after Started has written to the fifo it reads.
func TestCommandStartedWhileItRuns(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "go")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	c := mustNewCommand(t, CommandConfig{Name: "p", Argv: shell(`cat "$1"`, fifo), OutputCap: 1 << 10})
	var calls atomic.Int32
	req := Request{Prompt: "p", Started: func() {
		calls.Add(1)
		// Blocks until the child opens the fifo: were Started called
		// after the process ended, Run would never return.
		if err := os.WriteFile(fifo, []byte("went\n"), 0o600); err != nil {
			t.Errorf("write fifo: %v", err)
		}
	}}
	got, err := c.Run(context.Background(), req)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if string(got.Output) != "went\n" {
		t.Errorf("Output: got %q, want %q", got.Output, "went\n")
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("Started called %d times, want 1", n)
	}
}

// A command that cannot start does not report Started.
func TestCommandNotStartedWhenCancelled(t *testing.T) {
	c := mustNewCommand(t, CommandConfig{Name: "p", Argv: []string{"cat"}, OutputCap: 1 << 10})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var calls atomic.Int32
	if _, err := c.Run(ctx, Request{Started: func() { calls.Add(1) }}); err == nil {
		t.Fatal("Run with a cancelled context: got no error")
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("Started called %d times, want 0", n)
	}
}

// An OpenAI request reports Started once written, before its answer: the
// server here answers only after Started.
func TestOpenAIStartedBeforeTheAnswer(t *testing.T) {
	started := make(chan struct{})
	p, _ := newTestOpenAI(t, OpenAIConfig{Model: "m"}, func(w http.ResponseWriter, r *http.Request) {
		<-started
		answer(w, "the answer", 3)
	})
	var calls atomic.Int32
	reply, err := p.Run(context.Background(), Request{Prompt: "q", Started: func() {
		if calls.Add(1) == 1 {
			close(started)
		}
	}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if string(reply.Output) != "the answer" {
		t.Errorf("Output: got %q", reply.Output)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("Started called %d times, want 1", n)
	}
}
