package journald

import (
	"bytes"
	"encoding/binary"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// listen is a unixgram socket standing where the journal's would: the
// handler talks to a real socket, as it would to journald.
func listen(t *testing.T) (*net.UnixConn, string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "jd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "socket")
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, path
}

// parse reads a native-protocol datagram into its fields.
func parse(t *testing.T, b []byte) map[string]string {
	t.Helper()
	f := map[string]string{}
	for len(b) > 0 {
		nl := bytes.IndexByte(b, '\n')
		if nl < 0 {
			t.Fatalf("a field without its newline: %q", b)
		}
		line := string(b[:nl])
		if k, v, ok := strings.Cut(line, "="); ok {
			f[k] = v
			b = b[nl+1:]
			continue
		}
		n := binary.LittleEndian.Uint64(b[nl+1 : nl+9])
		f[line] = string(b[nl+9 : nl+9+int(n)])
		b = b[nl+9+int(n)+1:]
	}
	return f
}

func TestRunRecordsGoToTheJournalWithFields(t *testing.T) {
	sock, path := listen(t)
	var text bytes.Buffer
	log := slog.New(New(slog.NewTextHandler(&text, nil), path))

	log.Info("run ended", "run", "r7", "quest", "q1", "node", "n3", "exit", "crashed", "exit_code", 3, "why", "two\nlines")
	buf := make([]byte, 64<<10)
	n, err := sock.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	got := parse(t, buf[:n])
	want := map[string]string{"MESSAGE": "run ended", "PRIORITY": "6", "SYSLOG_IDENTIFIER": "questbox",
		"QUESTBOX_RUN": "r7", "QUESTBOX_QUEST": "q1", "QUESTBOX_NODE": "n3", "QUESTBOX_EXIT": "crashed",
		"QUESTBOX_EXIT_CODE": "3", "QUESTBOX_WHY": "two\nlines"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("field %s = %q, want %q (entry %q)", k, got[k], v, got)
		}
	}
	if text.Len() != 0 {
		t.Errorf("a record sent to the journal was also written as text: %q", text.String())
	}

	// Attributes given by With count too.
	log.With("run", "r8").Warn("run log not kept", "quest", "q2")
	n, err = sock.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	if got := parse(t, buf[:n]); got["QUESTBOX_RUN"] != "r8" || got["QUESTBOX_QUEST"] != "q2" || got["PRIORITY"] != "4" {
		t.Errorf("a With attribute: %q", got)
	}

	// Records that name no run stay text.
	log.Info("tick failed", "err", "disk full")
	if !strings.Contains(text.String(), "msg=\"tick failed\"") {
		t.Errorf("a record without a run: text %q", text.String())
	}
}

// Without the journal's socket, run records are text as before.
func TestNoJournalKeepsText(t *testing.T) {
	var text bytes.Buffer
	log := slog.New(New(slog.NewTextHandler(&text, nil), filepath.Join(t.TempDir(), "none")))
	log.Info("run started", "run", "r1", "quest", "q1", "node", "n1")
	if !strings.Contains(text.String(), "run=r1 quest=q1 node=n1") {
		t.Errorf("text: %q", text.String())
	}
}

func TestAvailable(t *testing.T) {
	if Available(func(string) string { return "" }) {
		t.Error("available without JOURNAL_STREAM")
	}
}
