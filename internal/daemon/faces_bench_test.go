package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/gorilla/websocket"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/internal/config"
	"github.com/questbox/questbox/ui/api"
	"github.com/questbox/questbox/ui/dashboard"
	"github.com/questbox/questbox/ui/mqtt"
	"github.com/questbox/questbox/ui/mqtt/mosquittotest"
)

// BenchmarkFacesBusyTick is a busy tick of 1,000 dispatches whose agents
// answer at once, with the faces wired as the daemon wires them: MQTT
// (the client of ui/mqtt publishing to a real mosquitto, read back by a
// subscriber) and the dashboard (its websocket, read by a client), both
// over the API's event watch. For every event it takes three times: when
// a subscription of the engine's own saw it (right after its commit: the
// engine wakes its subscribers once the commit returned), when the MQTT
// subscriber received it, and when the websocket client did; for every
// verdict, also when its agent answered. It reports, per tick, the p50,
// p99 and worst of commit → MQTT and commit → dashboard, and of agent's
// answer → MQTT (which adds the group commit's gathering).
//
//	go test -run '^$' -bench FacesBusyTick -benchtime 3x ./cmd/questbox
func BenchmarkFacesBusyTick(b *testing.B) {
	const quests = 1000
	dir := b.TempDir()
	st, err := engine.OpenStore(dir, engine.StoreOptions{})
	if err != nil {
		b.Fatal(err)
	}
	answered := &answerTimes{at: map[string]time.Time{}}
	eng, err := engine.New(st, engine.Options{Providers: map[string]engine.Provider{"instant": answered}, MaxParallel: quests})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { eng.Shutdown(0); st.Close() })
	for q := range quests {
		s := eng.NewQuestSpec(fmt.Sprintf("bench %d", q), fmt.Sprintf("bench the faces %d", q))
		s.Provider, s.Mode = "instant", engine.ModeSolo
		s.Limits.MaxAgentRuns = b.N + 10
		quest, err := eng.NewQuest(s)
		if err != nil {
			b.Fatal(err)
		}
		hyps := make([]string, b.N+1)
		for i := range hyps {
			hyps[i] = fmt.Sprintf("hypothesis %d of quest %d", i, q)
		}
		if _, err := eng.Scan(quest.ID, hyps); err != nil {
			b.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	localOpt := api.Options{Engines: api.Only(eng), Config: config.Default(), Internal: true}
	local := api.New(localOpt)
	seen := newSeqTimes()

	// The engine's own subscriber: the commit's time.
	sub := eng.Subscribe(eng.LastSeq())
	wg.Go(func() {
		defer sub.Close()
		for {
			bt, err := sub.Follow(ctx)
			if err != nil {
				return
			}
			now := time.Now()
			for _, ev := range bt.Events {
				seen.mark(0, ev.Seq, now, ev)
			}
		}
	})

	// MQTT, as the daemon runs it, and a subscriber on the broker.
	broker := mosquittotest.Start(b, mosquittotest.Options{})
	cfg := config.Default()
	cfg.Daemon.DeviceID, cfg.MQTT.Broker, cfg.MQTT.Discovery = "facebench", broker.URL(), false
	opt, err := mqttOptions(cfg, "dev", func() (string, error) { return "bench", nil })
	if err != nil {
		b.Fatal(err)
	}
	mc, err := mqtt.New(localOpt, opt)
	if err != nil {
		b.Fatal(err)
	}
	wg.Go(func() { mc.Run(ctx) })
	online := make(chan struct{})
	var onlineOnce sync.Once
	po := paho.NewClientOptions().AddBroker(broker.URL()).SetClientID("facebench-sub").SetOrderMatters(false)
	pc := paho.NewClient(po)
	if tk := pc.Connect(); tk.Wait() && tk.Error() != nil {
		b.Fatal(tk.Error())
	}
	defer pc.Disconnect(100)
	handler := func(_ paho.Client, m paho.Message) {
		now := time.Now()
		if m.Topic() == cfg.MQTTBase()+"/status" {
			if string(m.Payload()) == "online" {
				onlineOnce.Do(func() { close(online) })
			}
			return
		}
		var ev api.Event
		if json.Unmarshal(m.Payload(), &ev) == nil && ev.Seq > 0 {
			seen.mark(1, ev.Seq, now, engine.Event{})
		}
	}
	if tk := pc.Subscribe(cfg.MQTTBase()+"/#", 1, handler); tk.Wait() && tk.Error() != nil {
		b.Fatal(tk.Error())
	}
	<-online

	// The dashboard, public to read, and one websocket client.
	pw := filepath.Join(dir, "dashboard.password")
	if _, err := dashboard.EnsurePassword(pw, filepath.Join(dir, "dashboard.first-password")); err != nil {
		b.Fatal(err)
	}
	srv, err := dashboard.New(dashboard.Options{API: api.Options{Engines: api.Only(eng), Config: cfg}, Events: local,
		Config: config.Dashboard{Enabled: true, Read: config.ReadPublic, MaxClients: 4}, PasswordFile: pw})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	wg.Go(func() { srv.Serve(ctx, ln) })
	ws, _, err := websocket.DefaultDialer.Dial("ws://"+ln.Addr().String()+"/ws", nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, _, err := ws.ReadMessage(); err != nil { // the snapshot: it has joined
		b.Fatal(err)
	}
	wg.Go(func() {
		defer ws.Close()
		for {
			_, msg, err := ws.ReadMessage()
			if err != nil {
				return
			}
			now := time.Now()
			var f struct {
				Events []api.Event `json:"events"`
			}
			if json.Unmarshal(msg, &f) == nil {
				for _, ev := range f.Events {
					seen.mark(2, ev.Seq, now, engine.Event{})
				}
			}
		}
	})
	go func() { <-ctx.Done(); ws.Close() }()

	var mqttLat, dashLat, answerLat []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		from := eng.LastSeq()
		rep, err := eng.Tick(context.Background())
		if err != nil || len(rep.Dispatched) != quests {
			b.Fatalf("tick %d: dispatched %d, %v; want %d", i, len(rep.Dispatched), err, quests)
		}
		eng.Wait()
		upto := eng.LastSeq()
		if !seen.waitAll(from, upto, 2*time.Minute) {
			b.Fatalf("tick %d: the faces did not get every event from %d to %d within 2 minutes", i, from+1, upto)
		}
		if os.Getenv("FACES_DEBUG") != "" {
			seen.dump(b, from, upto)
		}
		m, d, a := seen.latencies(from, upto, answered)
		mqttLat, dashLat, answerLat = append(mqttLat, m...), append(dashLat, d...), append(answerLat, a...)
	}
	b.StopTimer()
	report := func(name string, ds []time.Duration) {
		slices.Sort(ds)
		if len(ds) == 0 {
			b.Fatalf("no %s latencies", name)
		}
		q := func(p float64) float64 { return float64(ds[int(p*float64(len(ds)-1))].Microseconds()) / 1000 }
		b.ReportMetric(q(0.5), name+"-p50-ms")
		b.ReportMetric(q(0.99), name+"-p99-ms")
		b.ReportMetric(q(1), name+"-max-ms")
	}
	report("commit-mqtt", mqttLat)
	report("commit-dash", dashLat)
	report("answer-mqtt", answerLat)
	b.ReportMetric(float64(len(mqttLat))/float64(b.N), "events/tick")
}

// answerTimes is an agent that answers every prompt at once with a dead
// end, each in other words (the same answer three times in a row would
// stop the quest), and notes when it answered, by node.
type answerTimes struct {
	n  atomic.Int64
	mu sync.Mutex // guards at
	at map[string]time.Time
}

func (p *answerTimes) Run(_ context.Context, req agent.Request) (agent.Reply, error) {
	ev := fmt.Sprintf("checked against sample invoice %d; it does not work.", p.n.Add(1))
	out := "```json\n" + fmt.Sprintf(`{"verdict":"dead","evidence":%q,"citations":[],"new_directions":[]}`, ev) + "\n```"
	p.mu.Lock()
	p.at[req.Node] = time.Now()
	p.mu.Unlock()
	return agent.Reply{Output: []byte(out), TokensReported: true}, nil
}

// seqTimes is when each event reached each observer: 0 the engine's
// subscriber, 1 MQTT, 2 the dashboard.
type seqTimes struct {
	mu     sync.Mutex // guards at, events
	at     [3]map[uint64]time.Time
	events map[uint64]engine.Event
	cond   *sync.Cond
}

func newSeqTimes() *seqTimes {
	s := &seqTimes{events: map[uint64]engine.Event{}}
	for i := range s.at {
		s.at[i] = map[uint64]time.Time{}
	}
	s.cond = sync.NewCond(&s.mu)
	return s
}

func (s *seqTimes) mark(who int, seq uint64, at time.Time, ev engine.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.at[who][seq]; !ok {
		s.at[who][seq] = at
	}
	if who == 0 {
		s.events[seq] = ev
	}
	s.cond.Broadcast()
}

// waitAll waits until every observer has every seq in (from, upto], at
// most within.
func (s *seqTimes) waitAll(from, upto uint64, within time.Duration) bool {
	timer := time.AfterFunc(within, func() { s.mu.Lock(); s.cond.Broadcast(); s.mu.Unlock() })
	defer timer.Stop()
	deadline := time.Now().Add(within)
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		all := true
		for seq := from + 1; seq <= upto && all; seq++ {
			for who := range s.at {
				if _, ok := s.at[who][seq]; !ok {
					all = false
					break
				}
			}
		}
		if all {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		s.cond.Wait()
	}
}

// latencies are, for the seqs in (from, upto], commit → MQTT and commit
// → dashboard, and for verdicts, the agent's answer → MQTT.
func (s *seqTimes) latencies(from, upto uint64, answered *answerTimes) (m, d, a []time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	answered.mu.Lock()
	defer answered.mu.Unlock()
	for seq := from + 1; seq <= upto; seq++ {
		c := s.at[0][seq]
		m = append(m, s.at[1][seq].Sub(c))
		d = append(d, s.at[2][seq].Sub(c))
		if ev := s.events[seq]; ev.Kind == engine.KindVerdict {
			if t, ok := answered.at[ev.Node]; ok {
				a = append(a, s.at[1][seq].Sub(t))
			}
		}
	}
	return m, d, a
}

func (s *seqTimes) dump(b *testing.B, from, upto uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t0 := s.at[0][from+1]
	for seq := from + 1; seq <= upto; seq += 50 {
		fmt.Fprintf(os.Stderr, "seq %d %s: engine +%v mqtt +%v dash +%v\n", seq, s.events[seq].Kind, s.at[0][seq].Sub(t0), s.at[1][seq].Sub(t0), s.at[2][seq].Sub(t0))
	}
}
