package ground

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestCheckAddr(t *testing.T) {
	tests := []struct {
		name    string
		addr    string
		refused bool
		why     string // a word the refusal names, when refused
	}{
		// IPv4, refused.
		{"this network", "0.0.0.0", true, "this network"},
		{"this network, not zero", "0.1.2.3", true, "this network"},
		{"private 10/8", "10.20.30.40", true, "private-use"},
		{"shared address space low", "100.64.0.1", true, "shared address space"},
		{"shared address space (Tailscale)", "100.100.100.100", true, "shared address space"},
		{"shared address space high", "100.127.255.254", true, "shared address space"},
		{"loopback", "127.0.0.1", true, "loopback"},
		{"loopback, not .1", "127.255.0.9", true, "loopback"},
		{"link-local (cloud metadata)", "169.254.169.254", true, "link-local"},
		{"private 172.16/12", "172.16.0.1", true, "private-use"},
		{"private 172.16/12 high", "172.31.255.255", true, "private-use"},
		{"IETF protocol assignments", "192.0.0.200", true, "IETF protocol assignments"},
		{"DS-Lite", "192.0.0.1", true, "DS-Lite"},
		{"PCP anycast", "192.0.0.9", true, "PCP"},
		{"TURN anycast", "192.0.0.10", true, "TURN"},
		{"NAT64 discovery", "192.0.0.171", true, "NAT64/DNS64"},
		{"TEST-NET-1", "192.0.2.1", true, "documentation"},
		{"6to4 relay anycast", "192.88.99.1", true, "6to4 relay"},
		{"private 192.168/16", "192.168.1.1", true, "private-use"},
		{"benchmarking", "198.18.0.1", true, "benchmarking"},
		{"benchmarking high", "198.19.255.255", true, "benchmarking"},
		{"TEST-NET-2", "198.51.100.7", true, "documentation"},
		{"TEST-NET-3", "203.0.113.9", true, "documentation"},
		{"multicast", "224.0.0.251", true, "multicast"},
		{"multicast high", "239.255.255.250", true, "multicast"},
		{"reserved", "240.0.0.1", true, "reserved"},
		{"limited broadcast", "255.255.255.255", true, "broadcast"},

		// IPv4, allowed: the edges around refused blocks, and global
		// blocks of the registry.
		{"public", "93.184.215.14", false, ""},
		{"public DNS", "8.8.8.8", false, ""},
		{"just below shared space", "100.63.255.255", false, ""},
		{"just above shared space", "100.128.0.0", false, ""},
		{"just below 172.16/12", "172.15.255.255", false, ""},
		{"just above 172.16/12", "172.32.0.0", false, ""},
		{"just above 192.0.0.0/24", "192.0.1.1", false, ""},
		{"AS112-v4", "192.31.196.1", false, ""},
		{"AMT", "192.52.193.1", false, ""},
		{"direct delegation AS112", "192.175.48.1", false, ""},
		{"just above benchmarking", "198.20.0.1", false, ""},
		{"last unicast before multicast", "223.255.255.254", false, ""},

		// IPv6, refused.
		{"unspecified", "::", true, "unspecified"},
		{"loopback v6", "::1", true, "loopback"},
		{"IPv4-compatible loopback", "::127.0.0.1", true, "loopback"},
		{"IPv4-compatible private", "::10.0.0.1", true, "private-use"},
		{"IPv4-compatible public (deprecated)", "::8.8.8.8", true, "IPv4-compatible"},
		{"IPv4-mapped loopback", "::ffff:127.0.0.1", true, "loopback"},
		{"IPv4-mapped shared space", "::ffff:100.64.1.1", true, "shared address space"},
		{"IPv4-mapped link-local", "::ffff:169.254.169.254", true, "link-local"},
		{"NAT64 embedding loopback", "64:ff9b::127.0.0.1", true, "loopback"},
		{"NAT64 embedding private", "64:ff9b::192.168.0.1", true, "private-use"},
		{"local-use NAT64", "64:ff9b:1::8.8.8.8", true, "local-use IPv4/IPv6 translation"},
		{"discard-only", "100::1", true, "discard-only"},
		{"Teredo, another address", "2001:0:0:1::1", true, "Teredo"},
		{"IETF protocol assignments, unassigned", "2001:100::1", true, "IETF protocol assignments"},
		{"Teredo", "2001:0:4136:e378:8000:63bf:3fff:fdd2", true, "Teredo"},
		{"PCP anycast v6", "2001:1::1", true, "PCP"},
		{"TURN anycast v6", "2001:1::2", true, "TURN"},
		{"SRP anycast", "2001:1::3", true, "DNS-SD"},
		{"benchmarking v6", "2001:2::1", true, "benchmarking"},
		{"deprecated ORCHID", "2001:10::1", true, "ORCHID"},
		{"documentation 2001:db8::/32", "2001:db8::1", true, "documentation"},
		{"documentation 3fff::/20", "3fff:fff::1", true, "documentation"},
		{"6to4 embedding loopback", "2002:7f00:1::1", true, "loopback"},
		{"6to4 embedding private", "2002:c0a8:101::1", true, "private-use"},
		{"6to4 embedding shared space", "2002:6440:1::1", true, "shared address space"},
		{"SRv6 SIDs", "5f00::1", true, "SRv6"},
		{"unique local fc", "fc00::1", true, "unique local"},
		{"unique local fd", "fd7a:115c:a1e0::1", true, "unique local"},
		{"link-local v6", "fe80::1", true, "link-local"},
		{"link-local v6 with zone", "fe80::1%eth0", true, "link-local"},
		{"site-local", "fec0::1", true, "site-local"},
		{"multicast v6", "ff02::fb", true, "multicast"},
		{"unassigned outside 2000::/3", "4000::1", true, "outside 2000::/3"},
		{"IPv4-translated (SIIT)", "::ffff:0:7f00:1", true, "outside 2000::/3"},

		// IPv6, allowed.
		{"public v6", "2606:4700:4700::1111", false, ""},
		{"public v6 high", "3ffe::1", false, ""},
		{"IPv4-mapped public", "::ffff:8.8.8.8", false, ""},
		{"NAT64 embedding public", "64:ff9b::8.8.8.8", false, ""},
		{"6to4 embedding public", "2002:808:808::1", false, ""},
		{"AMT v6", "2001:3::1", false, ""},
		{"AS112-v6", "2001:4:112::1", false, ""},
		{"ORCHIDv2", "2001:20::1", false, ""},
		{"DRIP", "2001:30::1", false, ""},
		{"just above 2001::/23", "2001:200::1", false, ""},
		{"just above 2001:db8::/32", "2001:db9::1", false, ""},
		{"just above 3fff::/20", "3fff:1000::1", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := netip.ParseAddr(tt.addr)
			if err != nil {
				t.Fatalf("bad test address %q: %v", tt.addr, err)
			}
			err = checkAddr(a)
			if got := err != nil; got != tt.refused {
				t.Fatalf("checkAddr(%s) = %v, want refused=%v", tt.addr, err, tt.refused)
			}
			if err == nil {
				return
			}
			if !errors.Is(err, errBlocked) {
				t.Errorf("got %v, want it to wrap errBlocked", err)
			}
			if !strings.Contains(err.Error(), tt.why) {
				t.Errorf("got %q, want it to name %q", err, tt.why)
			}
		})
	}
}

// The dialer checks every address it is about to connect to, as the
// resolver gave it: names, literals in any notation, zones.
func TestRefusePrivateOnResolvedAddress(t *testing.T) {
	tests := []struct {
		name    string
		address string
		refused bool
	}{
		{"v4 loopback", "127.0.0.1:80", true},
		{"v6 loopback", "[::1]:443", true},
		{"IPv4-compatible loopback", "[::7f00:1]:80", true},
		{"IPv4-mapped private", "[::ffff:192.168.1.1]:80", true},
		{"link-local with zone", "[fe80::1%eth0]:80", true},
		{"public v4", "93.184.215.14:443", false},
		{"public v6", "[2606:4700:4700::1111]:443", false},
		{"not an address", "example.org:80", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := refusePrivate("tcp", tt.address, nil)
			if got := err != nil; got != tt.refused {
				t.Errorf("refusePrivate(%s) = %v, want refused=%v", tt.address, err, tt.refused)
			}
		})
	}
}

// A URL that names no private address still reaches none: the check is on
// the address the name resolves to, and on the literal whatever its form.
func TestNetRefusesNonGlobalTargets(t *testing.T) {
	srv := testServer(t)
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	n := NewNet(NetConfig{})
	for _, target := range []string{
		"http://localhost:" + port + "/ok", // a name resolving to loopback
		"http://127.0.0.1:" + port + "/ok",
		"http://[::ffff:127.0.0.1]:" + port + "/ok",
		"http://[::127.0.0.1]:" + port + "/ok",
	} {
		t.Run(target, func(t *testing.T) {
			_, err := n.FetchURL(context.Background(), target)
			if !errors.Is(err, errBlocked) || IsTransport(err) {
				t.Errorf("got %v, want a refusal (an answer, not a transport error)", err)
			}
		})
	}
	if err := n.Dial(context.Background(), "localhost:"+port); !errors.Is(err, errBlocked) {
		t.Errorf("dial localhost: got %v, want errBlocked", err)
	}
}
