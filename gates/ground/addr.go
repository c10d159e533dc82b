package ground

import (
	"errors"
	"fmt"
	"net/netip"
)

// Which destinations ground reaches when NetConfig.AllowPrivate is false.
//
// The rule is the IANA IPv4 and IPv6 Special-Purpose Address Registries:
// an address in a block the registries do not mark "globally reachable" is
// refused, and so is every block outside them that is not global unicast
// (IPv4 multicast; IPv6 outside 2000::/3, e.g. multicast, site-local and
// unassigned space). The most specific block decides, so the registry's
// global sub-ranges inside a refused block (2001:3::/32 AMT, 2001:4:112::/48
// AS112, 2001:20::/28 ORCHIDv2, 2001:30::/28 DRIP inside 2001::/23) are
// reachable. Three registry entries marked global are refused all the same:
// the PCP and TURN anycast addresses (192.0.0.9, 192.0.0.10, 2001:1::1,
// 2001:1::2) and DNS-SD SRP anycast (2001:1::3) reach the nearest such
// server, which is usually the box's own router.
//
// Addresses that embed an IPv4 address are judged by it: IPv4-mapped
// (::ffff:0:0/96), IPv4-compatible (::/96, so [::127.0.0.1] is loopback),
// NAT64 (64:ff9b::/96) and 6to4 (2002::/16). Local-use NAT64
// (64:ff9b:1::/48) is refused whole: where it embeds the IPv4 address depends
// on a prefix length only its operator knows, and the registry marks it not
// globally reachable.

// errBlocked is returned (as an answer) for a destination that is not
// globally reachable.
var errBlocked = errors.New("destination address is not globally reachable (private, local or special-purpose), and ground does not fetch those")

// block is one entry of the special-purpose table.
type block struct {
	prefix netip.Prefix
	name   string
	global bool // reachable: a global sub-range of a refused block
}

// special lists the special-purpose blocks, IPv4 then IPv6. Lookups take the
// longest matching prefix. It is read-only.
var special = []block{
	// IPv4 (RFC 6890 and its updates).
	{pfx("0.0.0.0/8"), `"this network"`, false},
	{pfx("10.0.0.0/8"), "private-use", false},
	{pfx("100.64.0.0/10"), "shared address space (carrier-grade NAT, Tailscale)", false},
	{pfx("127.0.0.0/8"), "loopback", false},
	{pfx("169.254.0.0/16"), "link-local", false},
	{pfx("172.16.0.0/12"), "private-use", false},
	{pfx("192.0.0.0/24"), "IETF protocol assignments", false},
	{pfx("192.0.0.0/29"), "IPv4 service continuity (DS-Lite)", false},
	{pfx("192.0.0.8/32"), "IPv4 dummy address", false},
	{pfx("192.0.0.9/32"), "port control protocol anycast (the nearest PCP server)", false},
	{pfx("192.0.0.10/32"), "TURN anycast (the nearest TURN server)", false},
	{pfx("192.0.0.170/31"), "NAT64/DNS64 discovery", false},
	{pfx("192.0.2.0/24"), "documentation (TEST-NET-1)", false},
	{pfx("192.88.99.0/24"), "deprecated 6to4 relay anycast", false},
	{pfx("192.168.0.0/16"), "private-use", false},
	{pfx("198.18.0.0/15"), "benchmarking", false},
	{pfx("198.51.100.0/24"), "documentation (TEST-NET-2)", false},
	{pfx("203.0.113.0/24"), "documentation (TEST-NET-3)", false},
	{pfx("224.0.0.0/4"), "multicast", false},
	{pfx("240.0.0.0/4"), "reserved", false},
	{pfx("255.255.255.255/32"), "limited broadcast", false},

	// IPv6. The embedded-IPv4 forms (::/96, ::ffff:0:0/96, 64:ff9b::/96,
	// 2002::/16) are handled before this table is consulted.
	{pfx("::/128"), "unspecified", false},
	{pfx("::1/128"), "loopback", false},
	{pfx("64:ff9b:1::/48"), "local-use IPv4/IPv6 translation", false},
	{pfx("100::/64"), "discard-only", false},
	{pfx("100:0:0:1::/64"), "dummy IPv6 prefix", false},
	{pfx("2001::/23"), "IETF protocol assignments", false},
	{pfx("2001::/32"), "Teredo", false},
	{pfx("2001:1::1/128"), "port control protocol anycast (the nearest PCP server)", false},
	{pfx("2001:1::2/128"), "TURN anycast (the nearest TURN server)", false},
	{pfx("2001:1::3/128"), "DNS-SD service registration anycast", false},
	{pfx("2001:2::/48"), "benchmarking", false},
	{pfx("2001:3::/32"), "AMT", true},
	{pfx("2001:4:112::/48"), "AS112-v6", true},
	{pfx("2001:10::/28"), "deprecated ORCHID", false},
	{pfx("2001:20::/28"), "ORCHIDv2", true},
	{pfx("2001:30::/28"), "drone remote ID (DRIP)", true},
	{pfx("2001:db8::/32"), "documentation", false},
	{pfx("3fff::/20"), "documentation", false},
	{pfx("5f00::/16"), "segment routing (SRv6) SIDs", false},
	{pfx("fc00::/7"), "unique local", false},
	{pfx("fe80::/10"), "link-local", false},
	{pfx("fec0::/10"), "deprecated site-local", false},
	{pfx("ff00::/8"), "multicast", false},
}

// IPv6 blocks whose addresses carry an IPv4 address, judged by it.
var (
	ipv4Compatible = pfx("::/96")
	nat64          = pfx("64:ff9b::/96")
	sixToFour      = pfx("2002::/16")
	globalUnicast6 = pfx("2000::/3")
)

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }

// checkAddr returns nil when a is globally reachable, and otherwise an
// error wrapping errBlocked that names the block a is in.
func checkAddr(a netip.Addr) error {
	if !a.IsValid() {
		return fmt.Errorf("not an IP address: %w", errBlocked)
	}
	a = a.WithZone("")
	if name, ok := blocked(a); ok {
		return fmt.Errorf("%s is %s: %w", a, name, errBlocked)
	}
	return nil
}

// blocked reports whether a is refused and which block refuses it.
func blocked(a netip.Addr) (string, bool) {
	if a.Is4In6() {
		v4 := a.Unmap()
		if name, ok := blocked(v4); ok {
			return "IPv4-mapped " + name, true
		}
		return "", false
	}
	if a.Is6() {
		if v4, form, ok := embedded4(a); ok {
			if name, ok := blocked(v4); ok {
				return fmt.Sprintf("%s embedding %s (%s)", form, v4, name), true
			}
			if form == "IPv4-compatible" {
				// Deprecated (RFC 4291) and never routed as such.
				return "IPv4-compatible (deprecated)", true
			}
			return "", false
		}
	}
	var best block
	found := false
	for _, b := range special {
		if b.prefix.Contains(a) && (!found || b.prefix.Bits() > best.prefix.Bits()) {
			best, found = b, true
		}
	}
	if found {
		if best.global {
			return "", false
		}
		return fmt.Sprintf("%s (%s)", best.name, best.prefix), true
	}
	if a.Is6() && !globalUnicast6.Contains(a) {
		return "not global unicast (outside 2000::/3)", true
	}
	return "", false
}

// embedded4 returns the IPv4 address an IPv6 address carries, for the forms
// that route to it: IPv4-compatible, NAT64 well-known prefix, 6to4. :: and
// ::1 are not IPv4-compatible: the table names them.
func embedded4(a netip.Addr) (netip.Addr, string, bool) {
	b := a.As16()
	switch {
	case ipv4Compatible.Contains(a) && a != netip.IPv6Unspecified() && a != netip.IPv6Loopback():
		return netip.AddrFrom4([4]byte(b[12:16])), "IPv4-compatible", true
	case nat64.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), "NAT64", true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), "6to4", true
	}
	return netip.Addr{}, "", false
}
