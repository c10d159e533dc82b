package dashboard

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/internal/config"
	"github.com/questbox/questbox/ui/api"
)

// instant answers every prompt at once with a dead end, each in other
// words (the same answer three times in a row would stop the quest).
type instant struct{ n *atomic.Int64 }

func (p instant) Run(context.Context, agent.Request) (agent.Reply, error) {
	ev := fmt.Sprintf("checked against sample invoice %d; it does not work.", p.n.Add(1))
	return agent.Reply{Output: answer("dead", ev), TokensReported: true}, nil
}

// BenchmarkTickWithClients is one whole tick cycle (10 quests, 10 runs
// dispatched, answered and recorded, about 60 events) with 0 and 100
// websocket clients connected and reading every event: the clients must
// not slow the tick (the hub reads the outbox once for all of them and
// never waits for one).
//
//	go test -run '^$' -bench TickWithClients -benchtime 200x ./ui/dashboard
func BenchmarkTickWithClients(b *testing.B) {
	for _, clients := range []int{0, 100} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			st, err := engine.OpenStore(b.TempDir(), engine.StoreOptions{})
			if err != nil {
				b.Fatal(err)
			}
			eng, err := engine.New(st, engine.Options{Providers: map[string]engine.Provider{"instant": instant{new(atomic.Int64)}}, MaxParallel: 10})
			if err != nil {
				b.Fatal(err)
			}
			defer func() { eng.Shutdown(0); st.Close() }()
			for q := range 10 {
				s := eng.NewQuestSpec(fmt.Sprintf("bench %d", q), "bench the tick")
				s.Provider = "instant"
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
			srv, err := New(Options{API: api.Options{Engines: engines{eng}, Config: config.Default()}, Events: api.New(api.Options{Engines: api.Only(eng)}),
				Config: config.Dashboard{Read: config.ReadPublic, MaxClients: clients + 1}, PasswordFile: benchPassword(b)})
			if err != nil {
				b.Fatal(err)
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			served := make(chan error, 1)
			go func() { served <- srv.Serve(ctx, ln) }()
			var readers sync.WaitGroup
			url := "ws://" + ln.Addr().String() + "/ws"
			for range clients {
				c, _, err := websocket.DefaultDialer.Dial(url, nil)
				if err != nil {
					b.Fatal(err)
				}
				if _, _, err := c.ReadMessage(); err != nil { // the snapshot: it has joined
					b.Fatal(err)
				}
				// A phone does its reading elsewhere: here the bytes are
				// taken off the socket and dropped, so that the clients'
				// own work does not compete with the tick for this
				// machine's two cores.
				readers.Go(func() {
					io.Copy(io.Discard, c.UnderlyingConn())
					c.Close()
				})
			}
			var tick time.Duration
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				rep, err := eng.Tick(context.Background())
				tick += time.Since(start)
				if err != nil || len(rep.Dispatched) == 0 {
					b.Fatalf("tick: %+v, %v", rep, err)
				}
				eng.Wait()
			}
			b.StopTimer()
			b.ReportMetric(float64(tick.Microseconds())/float64(b.N)/1000, "tick-ms/op")
			srv.hub.mu.Lock()
			b.ReportMetric(float64(srv.hub.frames)/float64(b.N), "frames/op")
			srv.hub.mu.Unlock()
			cancel()
			<-served
			readers.Wait()
		})
	}
}

func benchPassword(b *testing.B) string {
	path := b.TempDir() + "/pw"
	if err := writeCredentials(path, strings.Repeat("x", 12), 4); err != nil {
		b.Fatal(err)
	}
	return path
}
