// Package daemontest is what the tests of the daemon share, in process
// (internal/daemon) or as a process (cmd/questbox): a directory short
// enough for a unix socket, a stand-in for systemd's notify socket, and a
// buffer a daemon's goroutine may write while the test reads it.
package daemontest

import (
	"bytes"
	"net"
	"os"
	"sync"
	"testing"
	"time"
)

// ShortDir is a temporary directory whose path is short enough for a unix
// socket in it (under 108 bytes), which t.TempDir() is not always.
func ShortDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "qb")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// ListenNotify is a stand-in for systemd's notify socket at path.
func ListenNotify(t testing.TB, path string) *net.UnixConn {
	t.Helper()
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// ReadNotify is the next message on c. The deadline only ends a test
// whose daemon never notifies; it measures nothing.
func ReadNotify(t testing.TB, c *net.UnixConn) string {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	buf := make([]byte, 256)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatalf("no sd_notify message: %v", err)
	}
	return string(buf[:n])
}

// SyncBuffer is a bytes.Buffer safe for a goroutine writing while the
// test reads.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// RolesConfig is a config with two command providers of two vendors:
// claude (anthropic) and box (local), for the tests of what a quest's
// egress allows its roles.
const RolesConfig = `
[providers.claude]
type = "command"
argv = ["/bin/true"]
vendor = "anthropic"

[providers.box]
type = "command"
argv = ["/bin/true"]
vendor = "local"
`
