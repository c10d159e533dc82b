// Package mosquittotest runs Debian's mosquitto broker for tests: on a
// free loopback port, with a generated configuration (anonymous, a
// password file made with mosquitto_passwd, or TLS with a CA and a server
// certificate generated here), persistence in the test's temp dir so a
// restart keeps sessions, and a stop at cleanup. No fake broker.
//
// It also has a recording subscriber (Subscriber) that tests wait on with
// bounded polls of a condition, never sleeps.
package mosquittotest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Install is the command that installs what this package needs.
const Install = "apt-get install -y mosquitto"

// startTimeout bounds how long the broker may take to listen.
const startTimeout = 20 * time.Second

// Options configure a broker.
type Options struct {
	// Users, if not empty, turns anonymous access off and writes a
	// password file with these users (name → password) by mosquitto_passwd.
	Users map[string]string
	// TLS serves TLS (with a certificate for 127.0.0.1 and localhost,
	// signed by a generated CA) instead of plain MQTT.
	TLS bool
	// RequireClientCert makes the broker ask for a client certificate
	// signed by the CA (needs TLS).
	RequireClientCert bool
	// WebSocket adds a plain websocket listener (see WSURL).
	WebSocket bool
}

// Broker is a running mosquitto.
type Broker struct {
	t    testing.TB
	dir  string
	conf string
	port int
	ws   int // the websocket listener's port, 0 for none
	// CA is the generated certificate authority (TLS only).
	CA *CA

	mu     sync.Mutex // guards cmd, exited
	cmd    *exec.Cmd
	exited chan error // receives cmd.Wait's result
	log    logBuffer
}

// logBuffer is the broker's output, written by exec's copier.
type logBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Binary returns mosquitto's path, or fails the test with how to install
// it (also when CI=true: CI must have it).
func Binary(t testing.TB) string {
	t.Helper()
	for _, p := range []string{"/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("mosquitto"); err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("mosquitto is not installed on CI: the Makefile's TEST_DEBS must install it (%s)", Install)
	}
	t.Fatalf("these tests need Debian's mosquitto broker: %s (or make test, which installs it)", Install)
	return ""
}

// Start starts a broker; it is stopped when the test ends.
func Start(t testing.TB, opt Options) *Broker {
	t.Helper()
	bin := Binary(t)
	b := &Broker{t: t, dir: t.TempDir(), port: freePort(t)}
	var conf bytes.Buffer
	fmt.Fprintf(&conf, "listener %d 127.0.0.1\n", b.port)
	if os.Geteuid() == 0 {
		conf.WriteString("user root\n") // read the temp dir's files as the test does
	}
	fmt.Fprintf(&conf, "persistence true\npersistence_location %s/\nautosave_interval 0\n", b.dir)
	conf.WriteString("max_queued_messages 0\nmax_inflight_messages 0\nlog_dest stderr\nlog_type error\nlog_type warning\nlog_type notice\nlog_type information\n")
	if len(opt.Users) > 0 {
		pw := filepath.Join(b.dir, "passwd")
		for name, pass := range opt.Users {
			args := []string{"-b", pw, name, pass}
			if _, err := os.Stat(pw); err != nil {
				args = append([]string{"-c"}, args...)
			}
			if out, err := exec.Command(passwdTool(bin), args...).CombinedOutput(); err != nil {
				t.Fatalf("mosquitto_passwd: %v\n%s", err, out)
			}
		}
		fmt.Fprintf(&conf, "allow_anonymous false\npassword_file %s\n", pw)
	} else {
		conf.WriteString("allow_anonymous true\n")
	}
	if opt.TLS {
		b.CA = NewCA(t)
		cert, key := b.CA.Issue(t, b.dir, "server", true)
		fmt.Fprintf(&conf, "cafile %s\ncertfile %s\nkeyfile %s\n", b.CA.File, cert, key)
		if opt.RequireClientCert {
			conf.WriteString("require_certificate true\n")
		}
	}
	if opt.WebSocket {
		// After the main listener: mosquitto 2.0.11 refuses to start with
		// websocket listeners alone.
		b.ws = freePort(t)
		fmt.Fprintf(&conf, "listener %d 127.0.0.1\nprotocol websockets\n", b.ws)
	}
	b.conf = filepath.Join(b.dir, "mosquitto.conf")
	if err := os.WriteFile(b.conf, conf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	b.start()
	t.Cleanup(b.Stop)
	return b
}

func passwdTool(bin string) string {
	for _, p := range []string{filepath.Join(filepath.Dir(bin), "mosquitto_passwd"), "/usr/bin/mosquitto_passwd"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "mosquitto_passwd"
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Addr is host:port.
func (b *Broker) Addr() string { return "127.0.0.1:" + strconv.Itoa(b.port) }

// URL is the broker's URL: tcp:// or ssl://.
func (b *Broker) URL() string {
	if b.CA != nil {
		return "ssl://" + b.Addr()
	}
	return "tcp://" + b.Addr()
}

// WSURL is the websocket listener's URL (Options.WebSocket).
func (b *Broker) WSURL() string { return "ws://127.0.0.1:" + strconv.Itoa(b.ws) + "/mqtt" }

func (b *Broker) start() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cmd != nil {
		b.t.Fatal("mosquittotest: broker already running")
	}
	cmd := exec.Command(Binary(b.t), "-c", b.conf)
	cmd.Stdout, cmd.Stderr = &b.log, &b.log
	if err := cmd.Start(); err != nil {
		b.t.Fatalf("start mosquitto: %v", err)
	}
	b.cmd = cmd
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Wait until it listens (a bounded poll of the port), or it exited.
	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case err := <-exited:
			b.cmd = nil
			b.t.Fatalf("mosquitto exited at start: %v\n%s", err, b.log.String())
		default:
		}
		c, err := net.DialTimeout("tcp", b.Addr(), time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("mosquitto did not listen on %s within %s:\n%s", b.Addr(), startTimeout, b.log.String())
		}
		time.Sleep(20 * time.Millisecond) // poll interval of a bounded wait
	}
	b.exited = exited
}

// Stop stops the broker (SIGTERM: it saves its sessions and retained
// messages) and waits for it. Stopping a stopped broker does nothing.
func (b *Broker) Stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cmd == nil {
		return
	}
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.exited:
	case <-time.After(10 * time.Second):
		_ = b.cmd.Process.Kill()
		<-b.exited
	}
	b.cmd = nil
}

// Restart starts a stopped broker again on the same port.
func (b *Broker) Restart() {
	b.t.Helper()
	b.start()
}
