package prompt

import (
	"bytes"
	"io"
	"regexp"
	"slices"
	"sync"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/runlog"
)

// VendorLocal is the vendor of a provider on the box or the LAN
// (domain.VendorLocal): prompts to it are never redacted.
const VendorLocal = domain.VendorLocal

// RedactMask replaces each match of a [privacy] redact pattern in a prompt
// that leaves for a non-local vendor, and in a run's log.
const RedactMask = "[redacted]"

// Secrets masks the configured secrets in a text (the daemon's
// config.Redactor: the broker's password, the API keys, the values a
// provider's env passes). It must be safe for concurrent use.
type Secrets interface {
	String(s string) string
}

// Redaction is the one rule that masks what leaves the box and what the box
// writes of an agent's output (docs/design.md, "Privacy egress"): each match
// of a [privacy] redact pattern becomes [RedactMask], then each configured
// secret is masked as [Secrets] masks it. Every prompt to a non-local vendor
// goes through it (an agent's, a council member's, a Team stage's and the L2
// judge's: [Redaction.Outbound]), and so does every byte of a run's log
// before it reaches the disk ([Redaction.Log]).
//
// A nil *Redaction masks nothing. A Redaction is safe for concurrent use.
type Redaction struct {
	patterns []*regexp.Regexp
	secrets  Secrets
}

// NewRedaction returns the rule of patterns and secrets; secrets may be
// nil. It returns nil when both are empty: nothing to mask.
func NewRedaction(patterns []*regexp.Regexp, secrets Secrets) *Redaction {
	if len(patterns) == 0 && secrets == nil {
		return nil
	}
	return &Redaction{patterns: slices.Clone(patterns), secrets: secrets}
}

// String returns s masked, and whether anything was.
func (r *Redaction) String(s string) (string, bool) {
	if r == nil || s == "" {
		return s, false
	}
	out := s
	for _, re := range r.patterns {
		if re.MatchString(out) {
			out = re.ReplaceAllLiteralString(out, RedactMask)
		}
	}
	if r.secrets != nil {
		out = r.secrets.String(out)
	}
	return out, out != s
}

// mask is String without the report.
func (r *Redaction) mask(s string) string {
	out, _ := r.String(s)
	return out
}

// Outbound is req as it may leave the box for vendor: as it is for a
// local vendor, else with every text field a provider could send on
// masked (the prompt, direction, hypothesis and proposals). masked
// reports whether anything was (the run records it).
func (r *Redaction) Outbound(vendor string, req agent.Request) (out agent.Request, masked bool) {
	if r == nil || vendor == VendorLocal {
		return req, false
	}
	field := func(s *string) {
		var m bool
		if *s, m = r.String(*s); m {
			masked = true
		}
	}
	field(&req.Prompt)
	field(&req.Direction)
	field(&req.Hypothesis)
	if len(req.Proposals) > 0 {
		req.Proposals = slices.Clone(req.Proposals)
		for i := range req.Proposals {
			field(&req.Proposals[i].Hypothesis)
		}
	}
	return req, masked
}

// Error returns err with its message masked; errors.Is and errors.As
// still reach what it wraps. A command's error quotes the tail of its
// stderr, and the engine keeps it in the store as a fact and a run's
// message: it is masked as the log is.
func (r *Redaction) Error(err error) error {
	if err == nil {
		return nil
	}
	if msg, masked := r.String(err.Error()); masked {
		return &maskedError{msg: msg, err: err}
	}
	return err
}

// maskedError is an error whose message was masked.
type maskedError struct {
	msg string
	err error
}

func (e *maskedError) Error() string { return e.msg }
func (e *maskedError) Unwrap() error { return e.err }

// maxHeldLine is the most of one line a run's log holds back, waiting
// for its end, before it masks and writes what it has (see maskedLog).
const maxHeldLine = 64 << 10

// maskedLog is a run's log that masks what it is given before the log
// writes it (Redaction.Log). It masks whole lines: a secret an agent
// writes in two pieces (two writes to its stderr, or a pipe read that
// splits it) is held until its line ends and is masked whole. A line
// longer than maxHeldLine is masked and written up to its last blank,
// keeping the word it ends with for the next write; only a single word
// longer than that is masked in pieces.
//
// Safe for concurrent use: a command's stderr is copied to it while the
// engine may write the run's header.
type maskedLog struct {
	r  *Redaction
	lg *runlog.Log

	mu   sync.Mutex // guards held
	held []byte     // the current line, not yet written
}

// Log returns lg masked by r: what is written to it reaches lg a line at
// a time, masked. Close writes what it still holds, then closes lg. With
// a nil r every write goes straight to lg.
func (r *Redaction) Log(lg *runlog.Log) io.WriteCloser {
	if r == nil {
		return lg
	}
	return &maskedLog{r: r, lg: lg}
}

// Write implements io.Writer; it never fails (as runlog.Log.Write).
func (m *maskedLog) Write(p []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.held = append(m.held, p...)
	if i := bytes.LastIndexByte(m.held, '\n'); i >= 0 {
		m.emit(i + 1)
	}
	if len(m.held) > maxHeldLine {
		cut := bytes.LastIndexAny(m.held, " \t\r") + 1
		if cut == 0 {
			cut = len(m.held) // one word of maxHeldLine bytes: in pieces
		}
		m.emit(cut)
	}
	return len(p), nil
}

// emit masks and writes the first n bytes held. m.mu is held.
func (m *maskedLog) emit(n int) {
	m.lg.Write([]byte(m.r.mask(string(m.held[:n]))))
	m.held = append(m.held[:0], m.held[n:]...)
}

// Close writes the line still held, masked, and closes the log.
func (m *maskedLog) Close() error {
	m.mu.Lock()
	if len(m.held) > 0 {
		m.emit(len(m.held))
	}
	m.mu.Unlock()
	return m.lg.Close()
}
