package mqtt

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/internal/loopback"
	"github.com/questbox/questbox/ui/api"
	"github.com/questbox/questbox/ui/mqtt/mosquittotest"
)

const base = "questbox/" + testDevice

func TestSubscriberSeesStatusStateAndEventsInOrder(t *testing.T) {
	r := newRig(t, mosquittotest.Options{})
	sub := r.broker.Subscribe(t, "questbox/#")
	start := r.eng.LastSeq()
	r.start(nil)
	sub.WaitFor("status online", func(msgs []mosquittotest.Message) bool {
		m, ok := mosquittotest.Last(msgs, base+"/status")
		return ok && m.Payload == "online"
	})
	id := r.runDemo()
	last := r.eng.LastSeq()
	seqs := waitSeqs(t, sub, start, last)
	// One connection, no outage: each event exactly once, in order.
	if got := inOrderOnce(t, seqs); len(got) != len(seqs) {
		t.Errorf("events arrived more than once without an outage: %v", seqs)
	}
	msgs := sub.WaitFor("the quest's final state", func(msgs []mosquittotest.Message) bool {
		m, ok := mosquittotest.Last(msgs, base+"/quest/"+id+"/state")
		return ok && strings.Contains(m.Payload, `"status":"done"`)
	})
	kinds := map[string]int{}
	for _, m := range msgs {
		if k, ok := strings.CutPrefix(m.Topic, base+"/event/"); ok {
			kinds[k]++
			if m.Retained {
				t.Errorf("event on %s is retained", m.Topic)
			}
		}
	}
	if kinds["node"] == 0 || kinds["verdict"] == 0 || kinds["quest"] == 0 {
		t.Errorf("want node, verdict and quest events; got %v", kinds)
	}
	var q api.Quest
	m, _ := mosquittotest.Last(msgs, base+"/quest/"+id+"/state")
	if err := json.Unmarshal([]byte(m.Payload), &q); err != nil || q.ID != id || q.Nodes == 0 {
		t.Errorf("quest state is not api.Quest JSON of %s: %v %s", id, err, m.Payload)
	}
	// A late subscriber gets the retained state at once, and the summary
	// comes to say the quest is over: the batch that finished the quest
	// publishes its state, then the summary, so a subscriber arriving
	// between the two gets the previous summary retained and the new one
	// live.
	late := r.broker.Subscribe(t, base+"/#")
	summaryDone := func(msgs []mosquittotest.Message) bool {
		var sum api.Summary
		sm, ok := mosquittotest.Last(msgs, base+"/summary")
		return ok && json.Unmarshal([]byte(sm.Payload), &sum) == nil && sum.Quests == 1 && sum.ActiveQuests == 0
	}
	late.WaitFor("retained status, quest, consent and summary; a summary with no active quest", func(msgs []mosquittotest.Message) bool {
		want := map[string]bool{base + "/status": false, base + "/quest/" + id + "/state": false, base + "/consent": false, base + "/summary": false}
		for _, m := range msgs {
			if _, ok := want[m.Topic]; ok && m.Retained {
				want[m.Topic] = true
			}
		}
		for _, ok := range want {
			if !ok {
				return false
			}
		}
		return summaryDone(msgs)
	})
}

func TestBrokerOutageLosesNothing(t *testing.T) {
	r := newRig(t, mosquittotest.Options{})
	sub := r.broker.Subscribe(t, base+"/event/#")
	start := r.eng.LastSeq()
	c := r.start(nil)
	r.waitState("connected", connected)
	if _, err := r.eng.NewQuest(r.eng.NewQuestSpec("before", "x")); err != nil {
		t.Fatal(err)
	}
	r.broker.Stop()
	st := r.waitState("down", down)
	if st.Fault {
		t.Errorf("a broker that is down is not a fault: %+v", st)
	}
	// The box keeps working while the broker is away.
	r.runDemo()
	for range 50 {
		if err := r.eng.RecordDeviceEvent(engine.DeviceEvent{What: engine.DeviceNetworkUp, Target: "t"}); err != nil {
			t.Fatal(err)
		}
	}
	r.broker.Restart()
	last := r.eng.LastSeq()
	seqs := waitSeqs(t, sub, start, last)
	got := inOrderOnce(t, seqs)
	if got[0] != start+1 || got[len(got)-1] < last {
		t.Fatalf("events %d..%d, want %d..%d", got[0], got[len(got)-1], start+1, last)
	}
	// The second broker_up is recorded when the client reconnects, after
	// last: it comes after the backlog.
	sub.WaitFor("broker_down and two broker_up device events", func(msgs []mosquittotest.Message) bool {
		var downs, ups int
		for _, m := range msgs {
			if strings.HasSuffix(m.Topic, "/event/device") {
				downs += strings.Count(m.Payload, `"what":"broker_down"`)
				ups += strings.Count(m.Payload, `"what":"broker_up"`)
			}
		}
		return downs > 0 && ups >= 2
	})
	waitAcked(t, c, last)
	r.stop() // commits the cursor
	if got := r.eng.Cursor(Consumer); got < last {
		t.Errorf("cursor %d after a clean stop, want at least %d", got, last)
	}
	s := c.Stats()
	if s.Connects < 2 || s.AckCommits == 0 || s.AckCommits >= s.Acked/4 {
		t.Errorf("stats %+v: want a reconnect and cursor commits far fewer than the events acknowledged", s)
	}
}

func TestDaemonRestartWhileBrokerDownLosesNothing(t *testing.T) {
	r := newRig(t, mosquittotest.Options{})
	sub := r.broker.Subscribe(t, base+"/event/#")
	start := r.eng.LastSeq()
	r.start(nil)
	r.waitState("connected", connected)
	r.broker.Stop()
	r.waitState("down", down)
	r.runDemo()
	// The daemon stops and starts again while the broker is away.
	r.stop()
	r.closeEngine()
	r.openEngine()
	r.runDemo()
	r.start(nil)
	r.broker.Restart()
	last := r.eng.LastSeq()
	got := inOrderOnce(t, waitSeqs(t, sub, start, last))
	if got[0] != start+1 {
		t.Fatalf("first event %d, want %d", got[0], start+1)
	}
}

func TestLastWillWhenTheConnectionDies(t *testing.T) {
	r := newRig(t, mosquittotest.Options{})
	p := newProxy(t, r.broker.Addr())
	r.opt.Broker = p.url()
	sub := r.broker.Subscribe(t, base+"/status")
	r.start(nil)
	sub.WaitFor("online", func(msgs []mosquittotest.Message) bool {
		m, ok := mosquittotest.Last(msgs, base+"/status")
		return ok && m.Payload == "online"
	})
	p.cut() // no DISCONNECT: the broker publishes the Last Will
	msgs := sub.WaitFor("offline (Last Will), then online again", func(msgs []mosquittotest.Message) bool {
		seenOffline := false
		for _, m := range msgs {
			seenOffline = seenOffline || m.Payload == "offline"
			if seenOffline && m.Payload == "online" {
				return true
			}
		}
		return false
	})
	_ = msgs
	// A clean stop says offline itself.
	r.stop()
	sub.WaitFor("offline at a clean stop", func(msgs []mosquittotest.Message) bool {
		return msgs[len(msgs)-1].Payload == "offline"
	})
}

func TestConnectionProblems(t *testing.T) {
	users := map[string]string{"questbox": "right"}
	tests := []struct {
		name    string
		broker  mosquittotest.Options
		mod     func(r *rig, o *Options)
		fault   bool
		wantErr string // in the box's error and the log
	}{
		{"wrong password", mosquittotest.Options{Users: users},
			func(_ *rig, o *Options) { o.Username, o.Password = "questbox", "wrong" },
			true, "refused the login: not authorised"}, // mosquitto says "not authorised" for a wrong password
		{"no credentials", mosquittotest.Options{Users: users}, nil, true, "refused the login: not authorised"},
		{"untrusted certificate", mosquittotest.Options{TLS: true}, nil, true, "not trusted"},
		{"certificate for another name", mosquittotest.Options{TLS: true},
			func(r *rig, o *Options) {
				o.TLS = mustTLS(t, TLSFiles{CA: r.broker.CA.File, ServerName: "mqtt.example"})
			},
			true, `not valid for "mqtt.example"`},
		{"no client certificate", mosquittotest.Options{TLS: true, RequireClientCert: true},
			func(r *rig, o *Options) {
				// Under TLS 1.3 the broker refuses the missing certificate
				// after the handshake, and the alert races the connection
				// reset; TLS 1.2 refuses it in the handshake.
				o.TLS = mustTLS(t, TLSFiles{CA: r.broker.CA.File})
				o.TLS.MaxVersion = tls.VersionTLS12
			},
			true, "refused the TLS handshake"},
		{"unreachable", mosquittotest.Options{},
			func(r *rig, o *Options) { o.Broker = "tcp://" + loopback.ClosedAddr(t) },
			false, "unreachable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, tt.broker)
			r.start(func(o *Options) {
				if tt.mod != nil {
					tt.mod(r, o)
				}
			})
			st := r.waitState("failed", func(b api.Broker) bool { return b.Error != "" })
			if st.Fault != tt.fault || st.Connected || !strings.Contains(st.Error, tt.wantErr) {
				t.Errorf("state %+v, want fault=%v and an error with %q", st, tt.fault, tt.wantErr)
			}
			if !strings.Contains(strings.ReplaceAll(r.logs.String(), `\"`, `"`), tt.wantErr) {
				t.Errorf("log has no line with %q:\n%s", tt.wantErr, r.logs.String())
			}
			// The box keeps working, and the failure is a device event.
			if _, err := r.eng.NewQuest(r.eng.NewQuestSpec("still ticking", "x")); err != nil {
				t.Fatal(err)
			}
			if _, err := r.eng.Tick(context.Background()); err != nil {
				t.Fatal(err)
			}
			r.eng.Wait()
			evs, err := r.eng.Events(0, 0)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, ev := range evs {
				found = found || ev.Device != nil && ev.Device.What == engine.DeviceBrokerDown && ev.Device.Fault == tt.fault
			}
			if !found {
				t.Errorf("no broker_down event with fault=%v in %+v", tt.fault, evs)
			}
		})
	}
}

func TestTLSWithPasswordAndClientCertificate(t *testing.T) {
	r := newRig(t, mosquittotest.Options{TLS: true, RequireClientCert: true, Users: map[string]string{"qb": "secret"}})
	cert, key := r.broker.CA.Issue(t, t.TempDir(), "client", false)
	r.start(func(o *Options) {
		o.Username, o.Password = "qb", "secret"
		o.TLS = mustTLS(t, TLSFiles{CA: r.broker.CA.File, Cert: cert, Key: key})
	})
	r.waitState("connected over TLS", connected)
}

func TestWebSocketBroker(t *testing.T) {
	r := newRig(t, mosquittotest.Options{WebSocket: true})
	sub := r.broker.Subscribe(t, base+"/#")
	r.opt.Broker = r.broker.WSURL()
	r.start(nil)
	r.waitState("connected over a websocket", connected)
	sub.WaitFor("online and the broker_up event", func(msgs []mosquittotest.Message) bool {
		m, ok := mosquittotest.Last(msgs, base+"/event/device")
		return ok && strings.Contains(m.Payload, `"what":"broker_up"`)
	})
}

func TestAcksAreBatched(t *testing.T) {
	r := newRig(t, mosquittotest.Options{})
	sub := r.broker.Subscribe(t, base+"/event/#")
	start := r.eng.LastSeq()
	// Only the count may commit: 1,000 events, one commit per 100.
	c := r.start(func(o *Options) { o.AckEvery, o.AckInterval, o.Window = 100, 1<<62, 64 })
	r.waitState("connected", connected)
	for range 1000 {
		if err := r.eng.RecordDeviceEvent(engine.DeviceEvent{What: engine.DeviceNetworkDown, Target: "t"}); err != nil {
			t.Fatal(err)
		}
	}
	last := r.eng.LastSeq()
	inOrderOnce(t, waitSeqs(t, sub, start, last))
	waitAcked(t, c, last)
	r.stop()
	s := c.Stats()
	events := last - start
	if s.AckCommits > events/100+1 || s.AckCommits < events/100 {
		t.Errorf("%d commits for %d events, want %d or %d", s.AckCommits, events, events/100, events/100+1)
	}
	if got := r.eng.Cursor(Consumer); got != last {
		t.Errorf("cursor %d after a clean stop, want %d", got, last)
	}
}

func mustTLS(t *testing.T, f TLSFiles) *tls.Config {
	t.Helper()
	cfg, err := TLSConfig(f)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestBatchedConnGathersWrites: what is written while a write is on its
// way goes out in one write, in order, and nothing is held back; after
// a failed write every Write fails; Close sends what was queued.
func TestBatchedConnGathersWrites(t *testing.T) {
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	c := newBatchedConn(a)
	want := ""
	for i := range 100 {
		s := fmt.Sprintf("packet %d;", i)
		want += s
		if n, err := c.Write([]byte(s)); err != nil || n != len(s) {
			t.Fatalf("write %d: %d, %v", i, n, err)
		}
	}
	got := make([]byte, len(want))
	reads := 0
	for n := 0; n < len(got); reads++ {
		m, err := b.Read(got[n:])
		if err != nil {
			t.Fatal(err)
		}
		n += m
	}
	if string(got) != want {
		t.Fatalf("read %q, want %q", got, want)
	}
	if reads >= 100 {
		t.Errorf("100 writes queued together reached the peer in %d reads, want them gathered", reads)
	}
	// The last bytes before Close (a DISCONNECT) go out.
	if _, err := c.Write([]byte("bye")); err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	bye := make([]byte, 3)
	if _, err := io.ReadFull(b, bye); err != nil || string(bye) != "bye" {
		t.Fatalf("after Close: read %q, %v; want bye", bye, err)
	}
	<-closed
	if _, err := c.Write([]byte("late")); err == nil {
		t.Error("a write after Close succeeded")
	}
}
