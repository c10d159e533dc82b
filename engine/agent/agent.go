// Package agent provides the agent providers of questbox: each turns a prompt
// into an answer (docs/design.md, "Providers and the worker's answer").
//
//   - [Command] runs a configured argv with the prompt on stdin, a timeout, an
//     output cap and an environment allow-list, in its own process group that
//     is killed as a whole.
//   - [OpenAI] calls any OpenAI-compatible chat-completions endpoint
//     (llama.cpp, Ollama, vLLM, hosted services).
//   - [Demo] is built in, deterministic and offline; every answer it gives is
//     labelled "[demo] " so nobody mistakes it for real work.
//
// The engine declares the interface it needs where it uses it:
//
//	type Provider interface {
//		Run(ctx context.Context, req agent.Request) (agent.Reply, error)
//	}
//
// # Contracts
//
// Run blocks until the answer is complete, the provider's own timeout expires,
// or ctx is done; it never leaves a goroutine or (for Command) a process of its
// group behind. All providers are safe for concurrent Run calls: their
// configuration is fixed at construction and each Run owns its own state.
//
// Run returns a Reply even with most errors, holding whatever the agent
// produced so far (a timed-out command's partial output, for example), so the
// engine can record it. Errors carry the provider name and the executable or
// URL, and wrap one of the sentinels below when one applies, to be checked
// with errors.Is:
//
//   - [ErrUnavailable]: the provider could not be reached; the engine defers
//     the node without consuming a try.
//   - [ErrNotFound]: a command's executable is missing or not executable.
//   - [ErrTimeout]: the agent ran past its timeout and was stopped.
//
// A cancelled ctx yields an error wrapping ctx.Err(). Any other error (a
// non-zero exit, an HTTP 400, a malformed response) is the agent's failure
// and consumes a try.
//
// # Answers
//
// Providers do not interpret answers; the gates do. Workers (roles scout, poc
// and strategist) answer with the last fenced ```json block of their output:
//
//	{"verdict": "promising" | "dead" | "conclusion",
//	 "evidence": "…",
//	 "citations": [{"source": "https://… or path", "quote": "exact words"}],
//	 "new_directions": ["…"]}
//
// The owner (team mode) answers with
//
//	{"evidence": "why",
//	 "actions": [{"action": "promote", "node": "n4"},
//	             {"action": "abort", "node": "n5", "reason": "…"},
//	             {"action": "spawn", "hypothesis": "…", "role": "poc"},
//	             {"action": "finish", "summary": "…"}]}
package agent

import (
	"errors"
	"io"
	"slices"
	"sync"
)

// Sentinel errors; providers wrap them with the provider name and the
// executable or URL concerned.
var (
	// ErrUnavailable is returned when the provider cannot be reached (transport
	// error, connection refused, DNS, HTTP 5xx/429): the engine defers the node
	// without consuming a try.
	ErrUnavailable = errors.New("agent provider unavailable")

	// ErrNotFound is returned when the command's executable is not on PATH or
	// not executable.
	ErrNotFound = errors.New("agent executable not found")

	// ErrTimeout is returned when the agent ran past its timeout and was killed;
	// the Reply holds what it printed before.
	ErrTimeout = errors.New("agent timed out")
)

// Proposal is a node proposed by a worker in team mode, shown to the owner.
type Proposal struct {
	Node       string // node id
	Hypothesis string
}

// Request is one try of one node, as handed to a provider.
type Request struct {
	Prompt     string     // full prompt text (direction, hypothesis, ancestors' evidence, last feedback, output contract)
	Quest      string     // quest id
	Node       string     // node id
	Role       string     // scout|poc|strategist|owner, or a council member's: reviewer|judge
	Direction  string     // the quest's direction
	Hypothesis string     // the node's hypothesis
	Attempt    int        // 1-based number of this try on the node
	Depth      int        // 0 for the quest's root node, parent depth+1 otherwise
	Proposals  []Proposal // only for role "owner" and council members: the quest's proposed nodes, oldest first
	// Dir is the quest's project directory: a Command runs there instead
	// of its configured Dir, and may write there. "" keeps the configured
	// one, and a confined Command writes the quest's scratch directory.
	Dir string
	// Network lets a confined Command reach the network: the quest allows
	// the provider's vendor and that vendor is not local. Without it the
	// run reaches nothing outside its own loopback.
	Network bool
	// Log, when not nil, receives what the run produces besides its
	// answer, as it comes: a Command's stderr, every byte of it. Its
	// Write must not block for long and its errors are ignored.
	Log io.Writer
	// A Team stage (docs/design.md, "Councils and Teams"): its stage (plan,
	// exec, accept; "" for any other node) and the Team's revision it works
	// on (0 first). Depth is then the Team's own depth.
	Stage    string
	Revision int
	// Started, when not nil, is called once the agent is under way: a
	// Command's process spawned, an OpenAI request written to the
	// connection, a Demo's answer begun. The engine frees the run's start
	// slot there, so that an agent slow to answer does not keep the next
	// runs from starting (Engine.start). A provider calls it at most once,
	// from any goroutine, and may not call it at all (the engine frees the
	// slot when Run returns); it must not block.
	Started func()
}

// started calls r.Started, if set.
func (r *Request) started() {
	if r.Started != nil {
		r.Started()
	}
}

// Reply is a provider's answer to a Request.
type Reply struct {
	Output         []byte // stdout / completion text, at most Cap bytes
	Truncated      bool   // output was cut at Cap
	Cap            int64  // the cap in bytes that applied; 0 means none (Demo)
	Tokens         int    // tokens used: provider-reported, else EstimateTokens
	TokensReported bool   // Tokens came from the provider
	// CostUSD is what the run cost in US dollars, as the provider
	// reported it (Claude Code's total_cost_usd); CostReported says it
	// did. No provider's cost is estimated.
	CostUSD      float64
	CostReported bool
	Model        string // model name when known ("demo" for Demo)
	// ExitCode is a command's exit status when it exited non-zero (-1
	// when a signal killed it); 0 otherwise.
	ExitCode int
	// StderrBytes is how many bytes a command wrote to stderr.
	StderrBytes int64
}

// EstimateTokens is the token count charged when a provider reports none:
// roughly four bytes per token over prompt and output.
func EstimateTokens(prompt string, output []byte) int {
	return (len(prompt) + len(output)) / 4
}

// MaxOutputCap is the largest output cap a provider accepts: an answer
// larger than this is not something a gate should read, and a cap must fit
// in memory on a 32-bit Pi.
const MaxOutputCap = 1 << 30

// capBuffer keeps the first max bytes written to it and counts, then
// discards, the rest. Its Write never fails, so a copy into it drains the
// source completely: a child never blocks on a full pipe.
type capBuffer struct {
	max       int64
	buf       []byte
	truncated bool
}

// readChunk is the most a copy from an agent's pipe reads at once, the
// size of a pooled chunk (chunks). An answer's memory grows with the answer,
// not with the cap: a busy tick has a thousand runs in flight, and a
// 64 KiB buffer each (as the cap once preallocated), plus io.Copy's
// 32 KiB, was most of its peak.
const readChunk = 4 << 10

func newCapBuffer(max int64) *capBuffer { return &capBuffer{max: max} }

// chunks are the buffers the reads from agents' pipes use for a while
// (stderr's chunk, stdout's first chunk, what is past the cap): a busy tick
// of a thousand runs allocated two chunks a run, 8 MB a tick, for answers of
// a few hundred bytes (docs/design.md, "Memory on a small box"). No chunk is
// kept past the read that took it.
var chunks = sync.Pool{New: func() any { return new([readChunk]byte) }}

// ReadFrom reads r to its end into the buffer, and never past max; what
// is past max is read in readChunk pieces and discarded. The first
// readChunk bytes are read into a pooled chunk and kept in a buffer of
// their size when the answer ends there; a longer answer's buffer grows
// by doubling from twice that. It reads until EOF or an error, which it
// returns (EOF is not one).
func (b *capBuffer) ReadFrom(r io.Reader) (int64, error) {
	var total int64
	if len(b.buf) == 0 && b.max > 0 {
		n, done, err := b.readFirst(r)
		total += int64(n)
		if done {
			return total, err
		}
	}
	var discard *[readChunk]byte
	defer func() {
		if discard != nil {
			chunks.Put(discard)
		}
	}()
	for {
		var n int
		var err error
		if int64(len(b.buf)) < b.max {
			if len(b.buf) == cap(b.buf) {
				grown := make([]byte, len(b.buf), min(max(2*int64(cap(b.buf)), readChunk), b.max))
				copy(grown, b.buf)
				b.buf = grown
			}
			n, err = r.Read(b.buf[len(b.buf):cap(b.buf)])
			b.buf = b.buf[:len(b.buf)+n]
		} else {
			if discard == nil {
				discard = chunks.Get().(*[readChunk]byte)
			}
			n, err = r.Read(discard[:])
			if n > 0 {
				b.truncated = true
			}
		}
		total += int64(n)
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// readFirst reads into a pooled chunk until the chunk (or max) is full,
// EOF or an error, and keeps what came: in a buffer of its size when the
// read is done (done; err is the error, EOF is none), else in one with
// room to grow.
func (b *capBuffer) readFirst(r io.Reader) (n int, done bool, err error) {
	chunk := chunks.Get().(*[readChunk]byte)
	defer chunks.Put(chunk)
	room := chunk[:min(readChunk, b.max)]
	for n < len(room) {
		var m int
		m, err = r.Read(room[n:])
		n += m
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			if n > 0 {
				b.buf = slices.Clone(room[:n])
			}
			return n, true, err
		}
	}
	b.buf = make([]byte, n, min(2*readChunk, b.max))
	copy(b.buf, room)
	return n, false, nil
}

func (b *capBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if room := b.max - int64(len(b.buf)); int64(len(p)) > room {
		b.truncated = true
		p = p[:room]
	}
	if need := len(b.buf) + len(p); need > cap(b.buf) {
		// Grow by doubling but never past max, so memory stays within the cap.
		grown := make([]byte, len(b.buf), int(min(max(2*int64(cap(b.buf)), int64(need)), b.max)))
		copy(grown, b.buf)
		b.buf = grown
	}
	b.buf = append(b.buf, p...)
	return n, nil
}

// bytes returns the kept bytes, or nil when none were written. The
// answer lives on in the run's result until it is committed, so the room
// past it is given back when it is more than the answer (a short answer
// read into a first chunk of readChunk).
func (b *capBuffer) bytes() []byte {
	if len(b.buf) == 0 {
		return nil
	}
	if cap(b.buf) > 2*len(b.buf) {
		b.buf = slices.Clone(b.buf)
	}
	return b.buf
}
