// Package loopback gives tests addresses on 127.0.0.1.
package loopback

import (
	"net"
	"testing"
)

// ClosedAddr returns a 127.0.0.1 address nothing listens on: a port the
// kernel handed out and that was closed again, so a dial is refused at
// once (nothing else on the machine is likely to take it in between).
func ClosedAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}
