package main

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/questbox/questbox/gates/ground/dnstest"
	"github.com/questbox/questbox/internal/daemon/daemontest"

	"golang.org/x/sys/unix"

	"github.com/questbox/questbox/internal/buildtest"
	"github.com/questbox/questbox/ui/api"
)

// TestNetnsNoRouteThenDNSFailure runs a real `questbox run` inside a network
// namespace of its own (`ip netns exec`), where the test controls the whole
// network: the probe target, the web server a citation points at, and the DNS
// server (ip netns exec mounts /etc/netns/NAME/resolv.conf over the daemon's
// /etc/resolv.conf). It takes the route away, then breaks DNS, and checks
// what staged evaluation promises (docs/design.md, "Staged evaluation and
// ground"): offline, an answer is deferred without a try and without a fetch;
// a DNS server failure is a transport error, so the node stays deferred; when
// the network and DNS are back the kept answer is judged again by itself and
// the node is locked, no try used.
//
// Needs root and iproute2 (CI has both); skipped otherwise (failed on CI).
func TestNetnsNoRouteThenDNSFailure(t *testing.T) {
	ns := needNetns(t)

	// The namespace's network, served from this process: sockets made on a
	// thread inside the namespace stay in it.
	dns := &dnstest.Server{Name: "site.test."}
	dns.SetServfail(true)
	var httpLn net.Listener
	inNetns(t, ns, func() {
		var err error
		if httpLn, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		pc, err := net.ListenPacket("udp", "127.0.0.1:53")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pc.Close() })
		go dns.Serve(pc)
	})
	port := httpLn.Addr().(*net.TCPAddr).Port
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<p>Tesseract with the jpn model reads invoices at 91% accuracy.</p>")
	})}
	go srv.Serve(httpLn)
	t.Cleanup(func() { srv.Close() })

	dir := daemontest.ShortDir(t)
	bin := buildtest.Questbox(t)
	data := filepath.Join(dir, "data")
	cfg := filepath.Join(dir, "questbox.toml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`[network]
probe = "127.0.0.1:%d"
probe_ttl = "1s"
fetch_timeout = "3s"
allow_private = true
[gpio]
backend = "sim"
[gates.web]
rules = [
  { id = "contract", kind = "contract", level = "fail" },
  { id = "quote", kind = "citation-quote", level = "fail" },
]
`, port)), 0o644)
	d := []string{"--config", cfg, "--data", data}

	daemon := exec.Command("ip", "netns", "exec", ns, bin, "run", "--config", cfg, "--data", data, "--tick", "200ms")
	logf, err := os.Create(filepath.Join(dir, "daemon.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	daemon.Stdout, daemon.Stderr = logf, logf
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { daemon.Process.Signal(syscall.SIGTERM); daemon.Wait() })
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("daemon log:\n%s", b)
		}
	})
	waitFor(t, "the daemon", func() bool { return qb(t, "", append([]string{"device", "status"}, d...)...).code == 0 })
	waitFor(t, "online", func() bool { return deviceStatus(t, data).Network.Online })

	must(t, 0, "", append([]string{"quest", "new", "web", "--direction", "free OCR for invoices", "--provider", "external", "--gate", "web"}, d...)...)
	must(t, 0, "", append([]string{"scan", "q1", "tesseract jpn"}, d...)...)

	// No route: the loopback device goes down, the probe fails.
	ipNetns(t, ns, "link", "set", "lo", "down")
	waitFor(t, "offline", func() bool { return !deviceStatus(t, data).Network.Online })
	answer := "```json\n" + `{"verdict":"conclusion","evidence":"tesseract with jpn reads invoices well enough","citations":[{"source":"http://site.test:` +
		strconv.Itoa(port) + `/ocr","quote":"91% accuracy"}],"new_directions":[]}` + "\n```\n"
	r := must(t, 0, answer, append([]string{"submit", "q1", "--node", "n1"}, d...)...)
	if !strings.HasPrefix(r.stdout, "DEFERRED") {
		t.Fatalf("offline submit printed %q, want DEFERRED", r.stdout)
	}
	if dns.Queries() != 0 {
		t.Errorf("offline: %d DNS queries, want none", dns.Queries())
	}

	// The route is back, DNS is not: the name cannot be resolved.
	ipNetns(t, ns, "link", "set", "lo", "up")
	waitFor(t, "online again and a DNS query", func() bool {
		return deviceStatus(t, data).Network.Online && dns.Queries() > 0
	})
	n := nodeOf(t, showQuest(t, data, "q1"), "n1")
	waitFor(t, "the DNS failure recorded", func() bool {
		n = nodeOf(t, showQuest(t, data, "q1"), "n1")
		return len(n.Attempts) >= 2
	})
	if n.Status != "deferred" || n.Tries != 0 {
		t.Fatalf("DNS server failing: node %s with %d tries (%q), want deferred with none", n.Status, n.Tries, n.Waiting)
	}

	// DNS answers: the kept answer is judged again, by itself.
	dns.SetServfail(false)
	waitFor(t, "the node to be locked", func() bool {
		n = nodeOf(t, showQuest(t, data, "q1"), "n1")
		return n.Terminal
	})
	if n.Status != "explored" || n.Tries != 0 {
		t.Errorf("after DNS came back: node %s with %d tries, want explored with none", n.Status, n.Tries)
	}
	var st api.Status
	decode(t, must(t, 0, "", append([]string{"status", "q1", "--json"}, d...)...), &st)
	if st.Used.AgentRuns != 1 {
		t.Errorf("%d agent runs, want 1: the submit (the replays are not agent runs)", st.Used.AgentRuns)
	}
	must(t, 0, "", append([]string{"verify"}, d...)...)
	t.Logf("DNS queries answered: %d (servfail until the switch)", dns.Queries())
}

// needNetns creates a network namespace with a resolv.conf of its own and
// returns its name; it is removed when the test ends.
func needNetns(t *testing.T) string {
	t.Helper()
	skip := func(why string) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI runs as root with iproute2: %s", why)
		}
		t.Skip(why)
	}
	if os.Getuid() != 0 {
		skip("needs root for ip netns")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		skip("needs iproute2's ip")
	}
	ns := fmt.Sprintf("qbtest%d", rand.IntN(1e6))
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		skip(fmt.Sprintf("ip netns add: %v: %s", err, out))
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	etc := filepath.Join("/etc/netns", ns)
	if err := os.MkdirAll(etc, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(etc) })
	if err := os.WriteFile(filepath.Join(etc, "resolv.conf"), []byte("nameserver 127.0.0.1\noptions timeout:1 attempts:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ipNetns(t, ns, "link", "set", "lo", "up")
	return ns
}

func ipNetns(t *testing.T, ns string, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", append([]string{"-n", ns}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("ip -n %s %v: %v: %s", ns, args, err, out)
	}
}

// inNetns runs f on an OS thread that has joined the namespace ns. The
// thread is never handed back to the Go scheduler (the goroutine ends
// locked, so the runtime destroys it): no other goroutine runs in ns.
func inNetns(t *testing.T, ns string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: see above
		fd, err := unix.Open(filepath.Join("/run/netns", ns), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Errorf("open the namespace: %v", err)
			return
		}
		defer unix.Close(fd)
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			t.Errorf("setns: %v", err)
			return
		}
		f()
	}()
	<-done
	if t.Failed() {
		t.FailNow()
	}
}
