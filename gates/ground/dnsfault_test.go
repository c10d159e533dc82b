package ground

import (
	"context"
	"github.com/questbox/questbox/gates/ground/dnstest"
	"net"
	"strings"
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
	dns := &dnstest.Server{Name: "site.test."}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go dns.Serve(pc)
	server := pc.LocalAddr().String()
	resolver := func(addr string) *net.Resolver {
		return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "udp", addr)
		}}
	}
	n := localNet(NetConfig{DNS: resolver(server), Timeout: 3 * time.Second})
	url := "http://site.test:" + port + "/ok"

	dns.SetServfail(true)
	if _, err := n.FetchURL(context.Background(), url); err == nil || !IsTransport(err) {
		t.Errorf("fetch with the DNS server failing: %v, want a transport error", err)
	}
	if _, err := n.LookupMX(context.Background(), "site.test"); err == nil || !IsTransport(err) {
		t.Errorf("MX lookup with the DNS server failing: %v, want a transport error", err)
	}
	if dns.Queries() == 0 {
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

	dns.SetServfail(false)
	if _, err := n.FetchURL(context.Background(), "http://missing.test:"+port+"/ok"); err == nil || IsTransport(err) {
		t.Errorf("fetch of a name that does not exist: %v, want an answer error (NXDOMAIN)", err)
	}
	b, err := n.FetchURL(context.Background(), url)
	if err != nil || b.Status != 200 || !strings.Contains(string(b.Data), "91%") {
		t.Errorf("fetch with DNS back: %d %q %v, want 200 and the page", b.Status, b.Data, err)
	}
}
