package mqtt

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/ui/api"
	"github.com/questbox/questbox/ui/api/apitest"
	"github.com/questbox/questbox/ui/mqtt/mosquittotest"
)

const testDevice = "testbox"

// rig is an engine on a real store, a real mosquitto and the client
// between them.
type rig struct {
	t      *testing.T
	dir    string
	st     *engine.Store
	eng    *engine.Engine
	broker *mosquittotest.Broker
	opt    Options
	logs   syncBuffer

	cancel context.CancelFunc
	done   chan error
	client *Client

	mu      sync.Mutex // guards states, changed
	states  []api.Broker
	changed chan struct{} // closed and replaced at each state
}

func newRig(t *testing.T, bopt mosquittotest.Options) *rig {
	t.Helper()
	r := &rig{t: t, dir: t.TempDir(), changed: make(chan struct{})}
	r.broker = mosquittotest.Start(t, bopt)
	r.openEngine()
	r.opt = Options{Broker: r.broker.URL(), Base: "questbox/" + testDevice, DeviceID: testDevice, Version: "test",
		DashboardURL: "http://testbox.local:8080/", Discovery: true,
		ReconnectMin: 20 * time.Millisecond, ReconnectMax: 200 * time.Millisecond,
		BirthDelay: func() time.Duration { return 0 }}
	t.Cleanup(func() {
		r.stop()
		r.closeEngine()
	})
	return r
}

func (r *rig) openEngine() {
	r.t.Helper()
	st, err := engine.OpenStore(r.dir, engine.StoreOptions{Check: true})
	if err != nil {
		r.t.Fatal(err)
	}
	eng, err := engine.New(st, engine.Options{Providers: map[string]engine.Provider{"demo": agent.Demo{}}, MaxParallel: 2})
	if err != nil {
		r.t.Fatal(err)
	}
	r.st, r.eng = st, eng
}

func (r *rig) closeEngine() {
	if r.st == nil {
		return
	}
	r.eng.Shutdown(0)
	if _, err := r.eng.Verify(); err != nil {
		r.t.Errorf("verify: %v", err)
	}
	if err := r.st.Close(); err != nil {
		r.t.Errorf("close store: %v", err)
	}
	r.st, r.eng = nil, nil
}

// start runs a client with r.opt (changed by mod).
func (r *rig) start(mod func(*Options)) *Client {
	r.t.Helper()
	return r.startAPI(api.Options{Engines: api.Only(r.eng)}, mod)
}

// startAPI runs a client of the API ao describes with r.opt (changed by
// mod).
func (r *rig) startAPI(ao api.Options, mod func(*Options)) *Client {
	r.t.Helper()
	opt := r.opt
	opt.Log = slog.New(slog.NewTextHandler(&r.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opt.OnState = func(b api.Broker) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.states = append(r.states, b)
		close(r.changed)
		r.changed = make(chan struct{})
	}
	if mod != nil {
		mod(&opt)
	}
	c, err := New(ao, opt)
	if err != nil {
		r.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel, r.done, r.client = cancel, make(chan error, 1), c
	go func() { r.done <- c.Run(ctx) }()
	return c
}

// stop stops the client and waits for it.
func (r *rig) stop() {
	if r.cancel == nil {
		return
	}
	r.cancel()
	if err := <-r.done; err != nil {
		r.t.Errorf("client: %v", err)
	}
	r.cancel = nil
}

// waitState waits until the client reported a state for which cond holds.
func (r *rig) waitState(what string, cond func(api.Broker) bool) api.Broker {
	r.t.Helper()
	deadline := time.NewTimer(mosquittotest.WaitTimeout)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		var last api.Broker
		ok := len(r.states) > 0
		if ok {
			last = r.states[len(r.states)-1]
		}
		changed := r.changed
		r.mu.Unlock()
		if ok && cond(last) {
			return last
		}
		select {
		case <-changed:
		case <-deadline.C:
			r.t.Fatalf("waited for the broker state %s; last %+v\nlog:\n%s", what, last, r.logs.String())
		}
	}
}

func connected(b api.Broker) bool { return b.Connected }
func down(b api.Broker) bool      { return !b.Connected && b.Error != "" }

// runDemo ticks a demo quest until it is done (bounded).
func (r *rig) runDemo() string {
	r.t.Helper()
	q, err := r.eng.NewQuest(r.eng.NewQuestSpec("demo", "find the most accurate free OCR for Japanese invoices"))
	if err != nil {
		r.t.Fatal(err)
	}
	for i := 0; i < 40; i++ {
		if _, err := r.eng.Tick(context.Background()); err != nil {
			r.t.Fatal(err)
		}
		r.eng.Wait()
		got, err := r.eng.Quest(q.ID)
		if err != nil {
			r.t.Fatal(err)
		}
		if got.Status != engine.QuestActive {
			return q.ID
		}
	}
	r.t.Fatalf("demo quest %s did not finish in 40 ticks", q.ID)
	return ""
}

// runToConsent ticks a demo quest with a checkpoint on scout until its
// first consent request (bounded), and returns it.
func (r *rig) runToConsent() engine.ConsentRequest {
	r.t.Helper()
	spec := r.eng.NewQuestSpec("checkpoint", "find the most accurate free OCR for Japanese invoices")
	spec.Checkpoints = []string{"scout"}
	if _, err := r.eng.NewQuest(spec); err != nil {
		r.t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if _, err := r.eng.Tick(context.Background()); err != nil {
			r.t.Fatal(err)
		}
		r.eng.Wait()
		reqs, err := r.eng.Consents()
		if err != nil {
			r.t.Fatal(err)
		}
		if len(reqs) > 0 {
			return reqs[0]
		}
	}
	r.t.Fatal("no consent request in 20 ticks")
	return engine.ConsentRequest{}
}

// waitSeqs waits until sub received every event seq in (from, to] on the
// event topics, and returns the received seqs in arrival order.
func waitSeqs(t *testing.T, sub *mosquittotest.Subscriber, from, to uint64) []uint64 {
	t.Helper()
	var got []uint64
	sub.WaitFor("events "+strconv.FormatUint(from+1, 10)+".."+strconv.FormatUint(to, 10), func(msgs []mosquittotest.Message) bool {
		got, _ = apitest.EventSeqs(t, msgs)
		seen := map[uint64]bool{}
		for _, s := range got {
			seen[s] = true
		}
		for s := from + 1; s <= to; s++ {
			if !seen[s] {
				return false
			}
		}
		return true
	})
	return got
}

// inOrderOnce checks that seqs, de-duplicated (first arrival kept), are
// strictly increasing and returns them.
func inOrderOnce(t *testing.T, seqs []uint64) []uint64 {
	t.Helper()
	seen := map[uint64]bool{}
	var out []uint64
	for _, s := range seqs {
		if seen[s] {
			continue
		}
		seen[s] = true
		if len(out) > 0 && s < out[len(out)-1] {
			t.Fatalf("event %d arrived after %d: out of order (arrivals %v)", s, out[len(out)-1], seqs)
		}
		out = append(out, s)
	}
	return out
}

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu     sync.Mutex // guards buf, notify
	buf    bytes.Buffer
	notify chan struct{} // closed and replaced at each write
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.notify != nil {
		close(b.notify)
		b.notify = nil
	}
	return b.buf.Write(p)
}

// waitFor waits until the log holds s (slog's quoting undone).
func (b *syncBuffer) waitFor(t *testing.T, s string) {
	t.Helper()
	deadline := time.NewTimer(mosquittotest.WaitTimeout)
	defer deadline.Stop()
	for {
		b.mu.Lock()
		text := strings.ReplaceAll(b.buf.String(), `\"`, `"`)
		if b.notify == nil {
			b.notify = make(chan struct{})
		}
		notify := b.notify
		b.mu.Unlock()
		if strings.Contains(text, s) {
			return
		}
		select {
		case <-notify:
		case <-deadline.C:
			t.Fatalf("the log never said %q:\n%s", s, text)
		}
	}
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// proxy is a TCP relay between the client and the broker that a test can
// cut: both sides close at once, with no DISCONNECT, like a killed process
// or a pulled cable.
type proxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex // guards conns
	conns []net.Conn
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, in, out)
			p.mu.Unlock()
			wg.Go(func() { _, _ = io.Copy(out, in); out.Close() })
			wg.Go(func() { _, _ = io.Copy(in, out); in.Close() })
		}
	})
	t.Cleanup(func() { ln.Close(); p.cut(); wg.Wait() })
	return p
}

func (p *proxy) url() string { return "tcp://" + p.ln.Addr().String() }

// cut closes every relayed connection.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}
