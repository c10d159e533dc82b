//go:build linux

package confine

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// dummyAddress puts a fresh address on a dummy interface of the host
// (as root; `ip` from iproute2) and listens on it: an address outside
// any run that is not the loopback. It is removed when the test ends.
func dummyAddress(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		failOrSkip(t, "making a dummy interface needs root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		failOrSkip(t, "no ip (iproute2) here: %v", err)
	}
	name := fmt.Sprintf("qbconf%d", rand.IntN(1e8))
	addr := fmt.Sprintf("10.%d.%d.1", 200+rand.IntN(50), rand.IntN(250))
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	// A dummy interface, or where the kernel has no dummy driver, an
	// empty bridge: either is an interface of the host's with nothing
	// behind it.
	if err := exec.Command("ip", "link", "add", name, "type", "dummy").Run(); err != nil {
		ip("link", "add", name, "type", "bridge")
	}
	t.Cleanup(func() { exec.Command("ip", "link", "del", name).Run() })
	ip("addr", "add", addr+"/32", "dev", name)
	ip("link", "set", name, "up")
	return listen(t, addr+":0")
}

// listen accepts (and closes) connections on addr until the test ends,
// and returns the address it listens on.
func listen(t *testing.T, addr string) string {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return ln.Addr().String()
}

// A local-only run reaches no address outside the run: not one on
// another interface of the box, not the box's own loopback (where the
// dashboard may listen). A run whose quest allows a non-local vendor
// reaches both.
func TestNetworkOnlyWhenAllowed(t *testing.T) {
	dummy := dummyAddress(t)
	host := listen(t, "127.0.0.1:0")
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			h := m.harness(t)
			if m.without == nil && !h.l.Report().Applied(Network) {
				failOrSkip(t, "no network namespace here: %s", h.l.Report())
			}
			local := h.run(Run{Write: []string{h.project}}, "dial:"+dummy, "dial:"+host, "selfdial:")
			for _, a := range []string{"dial:" + dummy, "dial:" + host} {
				if !strings.HasPrefix(local[a], "refused") {
					t.Errorf("local-only %s: %s, want refused", a, local[a])
				}
			}
			// The run's own loopback works inside its namespace; the
			// seccomp fallback allows no IPv4 socket at all.
			if want := m.without == nil; (local["selfdial:"] == "ok") != want {
				t.Errorf("local-only run dialling its own loopback: %s", local["selfdial:"])
			}
			open := h.run(Run{Write: []string{h.project}, Network: true}, "dial:"+dummy, "dial:"+host)
			for a, got := range open {
				if got != "ok" {
					t.Errorf("network run %s: %s, want ok", a, got)
				}
			}
		})
	}
}
