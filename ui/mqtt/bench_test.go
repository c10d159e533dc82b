package mqtt

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/ui/api"
	"github.com/questbox/questbox/ui/mqtt/mosquittotest"
)

// Benchmarks against Debian's mosquitto on loopback (bench/RESULTS.md):
//
//	go test -run '^$' -bench . -benchtime 3x ./ui/mqtt

// seqSink subscribes to the event topics and passes each event's seq on.
func seqSink(b *testing.B, broker *mosquittotest.Broker, n int) <-chan uint64 {
	b.Helper()
	ch := make(chan uint64, n)
	o := paho.NewClientOptions().AddBroker(broker.URL()).SetClientID(fmt.Sprintf("bench-sink-%d", time.Now().UnixNano())).
		SetOrderMatters(true)
	c := paho.NewClient(o)
	if tok := c.Connect(); !tok.WaitTimeout(mosquittotest.WaitTimeout) || tok.Error() != nil {
		b.Fatalf("sink connect: %v", tok.Error())
	}
	tok := c.Subscribe(base+"/event/#", 1, func(_ paho.Client, m paho.Message) {
		var ev struct {
			Seq uint64 `json:"seq"`
		}
		if err := json.Unmarshal(m.Payload(), &ev); err == nil {
			select {
			case ch <- ev.Seq:
			default:
			}
		}
	})
	if !tok.WaitTimeout(mosquittotest.WaitTimeout) || tok.Error() != nil {
		b.Fatalf("sink subscribe: %v", tok.Error())
	}
	b.Cleanup(func() { c.Disconnect(0) })
	return ch
}

// benchRig is a store, an engine and a broker for a benchmark.
type benchRig struct {
	st     *engine.Store
	eng    *engine.Engine
	broker *mosquittotest.Broker
}

func newBenchRig(b *testing.B) *benchRig {
	b.Helper()
	st, err := engine.OpenStore(b.TempDir(), engine.StoreOptions{})
	if err != nil {
		b.Fatal(err)
	}
	eng, err := engine.New(st, engine.Options{EventRetention: 100000})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return &benchRig{st: st, eng: eng, broker: mosquittotest.Start(b, mosquittotest.Options{})}
}

func (r *benchRig) client(b *testing.B) (*Client, func()) {
	b.Helper()
	c, err := New(api.Options{Engines: api.Only(r.eng)}, Options{Broker: r.broker.URL(), Base: base, DeviceID: testDevice, Discovery: true})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	return c, func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	}
}

// BenchmarkBacklogDrain measures draining a backlog of 10,000 events (an
// outage's worth) at QoS 1: from the client's start to the last PUBACK
// and to the last event at a subscriber, and the commits the cursor cost.
func BenchmarkBacklogDrain(b *testing.B) {
	const backlog = 10000
	r := newBenchRig(b)
	if _, err := r.eng.OpenOutbox(Consumer); err != nil {
		b.Fatal(err)
	}
	start := r.eng.Cursor(Consumer)
	for range backlog {
		if err := r.eng.RecordDeviceEvent(engine.DeviceEvent{What: engine.DeviceNetworkDown, Target: "1.1.1.1:53"}); err != nil {
			b.Fatal(err)
		}
	}
	last := r.eng.LastSeq()
	var total, toSub time.Duration
	var commits, ackCommits uint64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		if err := r.eng.AckEvents(Consumer, start); err != nil { // the same backlog again
			b.Fatal(err)
		}
		sink := seqSink(b, r.broker, 2*backlog)
		commits0 := r.st.Commits()
		b.StartTimer()
		t0 := time.Now()
		c, stop := r.client(b)
		for {
			if seq := <-sink; seq == last {
				break
			}
		}
		toSub += time.Since(t0)
		for c.Stats().Acked < backlog {
			time.Sleep(time.Millisecond) // the last PUBACKs are a hair behind the subscriber
		}
		total += time.Since(t0)
		b.StopTimer()
		stop()
		commits += r.st.Commits() - commits0
		ackCommits += c.Stats().AckCommits
		b.StartTimer()
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(backlog)*n/total.Seconds(), "events/s")
	b.ReportMetric(total.Seconds()/n*1000, "ms/drain-10k")
	b.ReportMetric(toSub.Seconds()/n*1000, "ms/to-subscriber")
	b.ReportMetric(float64(ackCommits)/n, "ack-commits/drain")
	b.ReportMetric(float64(commits)/n, "store-commits/drain")
}

// BenchmarkChangeToSubscriber measures the latency from a committed
// change (RecordDeviceEvent returned) to a subscriber receiving its event,
// one change at a time, with the client connected and idle in between.
func BenchmarkChangeToSubscriber(b *testing.B) {
	const changes = 500
	r := newBenchRig(b)
	sink := seqSink(b, r.broker, 2*changes)
	c, stop := r.client(b)
	defer stop()
	for !c.State().Connected || c.Stats().Acked == 0 {
		time.Sleep(time.Millisecond) // connected, and its broker_up event through
	}
	for len(sink) > 0 {
		<-sink
	}
	var lat []time.Duration
	b.ResetTimer()
	for range b.N {
		for range changes {
			if err := r.eng.RecordDeviceEvent(engine.DeviceEvent{What: engine.DeviceNetworkUp, Target: "t"}); err != nil {
				b.Fatal(err)
			}
			t0 := time.Now()
			want := r.eng.LastSeq()
			for seq := range sink {
				if seq == want {
					break
				}
			}
			lat = append(lat, time.Since(t0))
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
}
