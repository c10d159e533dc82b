// Package journald sends the log records of agent runs to the systemd
// journal as structured entries, over the journal's native protocol, so
// that `journalctl QUESTBOX_QUEST=q1` tells one quest's story.
//
// The daemon logs text to stderr, which systemd connects to the journal
// (JOURNAL_STREAM is then set): a stream carries no fields. [Handler]
// sends a record that names a run (an attribute "run") as one datagram to
// the journal's socket instead, each attribute a field QUESTBOX_<KEY>
// (QUESTBOX_RUN, QUESTBOX_QUEST, QUESTBOX_NODE, …) beside MESSAGE and
// PRIORITY; every other record, and one the socket refuses, goes to the
// text handler as before.
package journald

import (
	"context"
	"encoding/binary"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
)

// Socket is where systemd-journald receives native-protocol datagrams.
const Socket = "/run/systemd/journal/socket"

// Identifier is the SYSLOG_IDENTIFIER of the entries sent.
const Identifier = "questbox"

// Available reports whether the process logs to the journal: its stderr
// is a journal stream (JOURNAL_STREAM, set by systemd) and the journal's
// socket exists.
func Available(getenv func(string) string) bool {
	if getenv("JOURNAL_STREAM") == "" {
		return false
	}
	_, err := os.Stat(Socket)
	return err == nil
}

// Handler is a slog.Handler that sends records with a "run" attribute to
// the journal's native socket and hands every other record to a text
// handler. It is safe for concurrent use.
type Handler struct {
	text   slog.Handler
	conn   *conn
	attrs  []slog.Attr // from WithAttrs, keys already prefixed
	prefix string      // the open groups, "G_" each
}

// conn is the datagram socket, shared by a Handler and its derivations.
type conn struct {
	path string
	mu   sync.Mutex // guards c
	c    *net.UnixConn
}

// New returns a handler that sends run records to the journal socket at
// path (normally [Socket]) and everything else to text.
func New(text slog.Handler, path string) *Handler {
	return &Handler{text: text, conn: &conn{path: path}}
}

// Enabled implements slog.Handler: as the text handler decides.
func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool { return h.text.Enabled(ctx, l) }

// WithAttrs implements slog.Handler.
func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	out := *h
	out.text = h.text.WithAttrs(as)
	out.attrs = append(h.attrs[:len(h.attrs):len(h.attrs)], prefixed(h.prefix, as)...)
	return &out
}

// WithGroup implements slog.Handler.
func (h *Handler) WithGroup(name string) slog.Handler {
	out := *h
	out.text = h.text.WithGroup(name)
	out.prefix = h.prefix + name + "_"
	return &out
}

func prefixed(prefix string, as []slog.Attr) []slog.Attr {
	if prefix == "" {
		return as
	}
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = slog.Attr{Key: prefix + a.Key, Value: a.Value}
	}
	return out
}

// Handle implements slog.Handler.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	attrs := append([]slog.Attr(nil), h.attrs...)
	run := false
	r.Attrs(func(a slog.Attr) bool {
		attrs = append(attrs, prefixed(h.prefix, []slog.Attr{a})...)
		run = run || a.Key == "run"
		return true
	})
	if !run {
		for _, a := range h.attrs {
			run = run || a.Key == "run"
		}
	}
	if run && h.conn.send(Entry(r, attrs)) == nil {
		return nil
	}
	return h.text.Handle(ctx, r)
}

// Entry encodes a record as a native-protocol datagram: MESSAGE,
// PRIORITY, SYSLOG_IDENTIFIER and a field QUESTBOX_<KEY> per attribute
// (groups flattened with "_").
func Entry(r slog.Record, attrs []slog.Attr) []byte {
	var b []byte
	b = field(b, "MESSAGE", r.Message)
	b = field(b, "PRIORITY", priority(r.Level))
	b = field(b, "SYSLOG_IDENTIFIER", Identifier)
	var add func(prefix string, a slog.Attr)
	add = func(prefix string, a slog.Attr) {
		v := a.Value.Resolve()
		if v.Kind() == slog.KindGroup {
			for _, g := range v.Group() {
				add(prefix+a.Key+"_", g)
			}
			return
		}
		if name := fieldName(prefix + a.Key); name != "" {
			b = field(b, name, v.String())
		}
	}
	for _, a := range attrs {
		add("", a)
	}
	return b
}

// fieldName is key as a journal field: QUESTBOX_ and key upper-cased,
// every character outside A-Z, 0-9 and _ replaced by _; "" for an empty
// key.
func fieldName(key string) string {
	if key == "" {
		return ""
	}
	var b strings.Builder
	b.WriteString("QUESTBOX_")
	for _, c := range strings.ToUpper(key) {
		if (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' {
			b.WriteRune(c)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// field appends one field: KEY=value, or, for a value with a newline,
// KEY, a newline, its length as 64-bit little endian, and the value.
func field(b []byte, key, value string) []byte {
	if !strings.Contains(value, "\n") {
		b = append(b, key...)
		b = append(b, '=')
		b = append(b, value...)
		return append(b, '\n')
	}
	b = append(b, key...)
	b = append(b, '\n')
	b = binary.LittleEndian.AppendUint64(b, uint64(len(value)))
	b = append(b, value...)
	return append(b, '\n')
}

func priority(l slog.Level) string {
	switch {
	case l >= slog.LevelError:
		return "3"
	case l >= slog.LevelWarn:
		return "4"
	case l >= slog.LevelInfo:
		return "6"
	}
	return "7"
}

// send writes one datagram, dialling the socket at first use and again
// after a failure.
func (c *conn) send(b []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c == nil {
		uc, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: c.path, Net: "unixgram"})
		if err != nil {
			return err
		}
		c.c = uc
	}
	if _, err := c.c.Write(b); err != nil {
		c.c.Close()
		c.c = nil
		return err
	}
	return nil
}
