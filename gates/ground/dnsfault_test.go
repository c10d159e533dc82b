package ground

import (
	"context"
	"encoding/binary"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestDNSFailureIsTransport points Net's resolver (NetConfig.DNS) at a DNS
// server the test runs: while it answers SERVFAIL, or does not answer at
// all, a fetch and an MX lookup fail as transport errors (the engine then
// defers the node, no try used); NXDOMAIN is an answer (the source does
// not exist); once the server answers, the same fetch succeeds. The
// daemon-level version, with the system resolver in a network namespace,
// is TestNetnsNoRouteThenDNSFailure in cmd/questbox.
func TestDNSFailureIsTransport(t *testing.T) {
	srv := testServer(t)
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	dns := &fakeDNS{name: "site.test."}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go dns.serve(pc)
	server := pc.LocalAddr().String()
	resolver := func(addr string) *net.Resolver {
		return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "udp", addr)
		}}
	}
	n := localNet(NetConfig{DNS: resolver(server), Timeout: 3 * time.Second})
	url := "http://site.test:" + port + "/ok"

	dns.mode.Store(dnsServfail)
	if _, err := n.FetchURL(context.Background(), url); err == nil || !IsTransport(err) {
		t.Errorf("fetch with the DNS server failing: %v, want a transport error", err)
	}
	if _, err := n.LookupMX(context.Background(), "site.test"); err == nil || !IsTransport(err) {
		t.Errorf("MX lookup with the DNS server failing: %v, want a transport error", err)
	}
	if dns.queries.Load() == 0 {
		t.Fatal("the resolver never asked the test's DNS server")
	}

	// No DNS server at all: the port is closed.
	l, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.LocalAddr().String()
	l.Close()
	gone := localNet(NetConfig{DNS: resolver(closed), Timeout: 3 * time.Second})
	if _, err := gone.FetchURL(context.Background(), url); err == nil || !IsTransport(err) {
		t.Errorf("fetch with no DNS server: %v, want a transport error", err)
	}

	dns.mode.Store(dnsAnswer)
	if _, err := n.FetchURL(context.Background(), "http://missing.test:"+port+"/ok"); err == nil || IsTransport(err) {
		t.Errorf("fetch of a name that does not exist: %v, want an answer error (NXDOMAIN)", err)
	}
	b, err := n.FetchURL(context.Background(), url)
	if err != nil || b.Status != 200 || !strings.Contains(string(b.Data), "91%") {
		t.Errorf("fetch with DNS back: %d %q %v, want 200 and the page", b.Status, b.Data, err)
	}
}

const (
	dnsServfail = iota // every query: SERVFAIL
	dnsAnswer          // name's A record is 127.0.0.1; other names NXDOMAIN
)

// fakeDNS is a minimal DNS server for one name over UDP.
type fakeDNS struct {
	name    string // fully qualified, lower case
	mode    atomic.Int32
	queries atomic.Int64
}

func (s *fakeDNS) serve(pc net.PacketConn) {
	buf := make([]byte, 1500)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		if resp := s.answer(buf[:n]); resp != nil {
			pc.WriteTo(resp, from)
		}
	}
}

// answer builds the reply to query q, or nil for a packet it cannot read.
func (s *fakeDNS) answer(q []byte) []byte {
	if len(q) < 12 || binary.BigEndian.Uint16(q[4:]) != 1 {
		return nil
	}
	i, name := 12, ""
	for i < len(q) && q[i] != 0 {
		l := int(q[i])
		if i+1+l > len(q) {
			return nil
		}
		name += strings.ToLower(string(q[i+1:i+1+l])) + "."
		i += 1 + l
	}
	if i+5 > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[i+1:])
	s.queries.Add(1)
	resp := append([]byte(nil), q[:i+5]...)
	resp[2] = 0x80 | q[2]&0x01 // QR, keep RD
	resp[3] = 0x80             // RA, RCODE 0
	binary.BigEndian.PutUint16(resp[6:], 0)
	binary.BigEndian.PutUint16(resp[8:], 0)
	binary.BigEndian.PutUint16(resp[10:], 0)
	switch {
	case s.mode.Load() == dnsServfail:
		resp[3] |= 2
	case name != s.name:
		resp[3] |= 3 // NXDOMAIN
	case qtype == 1: // A
		binary.BigEndian.PutUint16(resp[6:], 1)
		resp = append(resp, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 5, 0, 4, 127, 0, 0, 1)
	}
	return resp
}
