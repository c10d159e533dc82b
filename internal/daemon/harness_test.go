package daemon

import (
	"bytes"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/questbox/questbox/internal/confine"
)

// TestMain makes the test binary the launcher of the agents the tests
// confine, as main makes questbox.
func TestMain(m *testing.M) {
	confine.Main()
	os.Exit(m.Run())
}

// shortDir is a temporary directory with a short path: a unix socket's
// path has to fit in 108 bytes.
func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "qb")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// listenNotify is a stand-in for systemd's notify socket at path.
func listenNotify(t *testing.T, path string) *net.UnixConn {
	t.Helper()
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// readNotify is the next message on c.
func readNotify(t *testing.T, c *net.UnixConn) string {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	buf := make([]byte, 256)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatalf("no sd_notify message: %v", err)
	}
	return string(buf[:n])
}

// syncBuffer is a bytes.Buffer safe for a goroutine writing while the
// test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
