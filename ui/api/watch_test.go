package api

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/questbox/questbox/engine"
)

// pruningEngine is an engine that keeps only the last five events.
func pruningEngine(t *testing.T) *engine.Engine {
	t.Helper()
	st, err := engine.OpenStore(t.TempDir(), engine.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(st, engine.Options{EventRetention: 5})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		eng.Shutdown(0)
		st.Close()
	})
	return eng
}

// burst makes more events than the retention keeps and prunes them.
func burst(t *testing.T, eng *engine.Engine) {
	t.Helper()
	s := eng.NewQuestSpec("burst", "make many events")
	s.Provider = engine.ProviderExternal
	q, err := eng.NewQuest(s)
	if err != nil {
		t.Fatal(err)
	}
	// One scan at a time: the engine prunes a write's events together
	// (schema 8), so a burst of one write would stay whole.
	for i := range 20 {
		if _, err := eng.Scan(q.ID, []string{fmt.Sprintf("hypothesis %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := eng.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestWatchDeliversInOrderAndSaysWhenItSkipped(t *testing.T) {
	eng := pruningEngine(t)
	srv := New(Options{Engines: Only(eng)})
	ctx := context.Background()
	w, err := srv.Watch(ctx, FromNewest)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if w.Last() != eng.LastSeq() {
		t.Fatalf("a watch from the newest stands at %d, want %d", w.Last(), eng.LastSeq())
	}
	if err := srv.RecordDeviceEvent(ctx, DeviceEvent{What: DeviceBrokerUp, Broker: "tcp://b:1883"}); err != nil {
		t.Fatal(err)
	}
	b, err := w.Next(ctx)
	if err != nil || b.Skipped || len(b.Events) != 1 {
		t.Fatalf("first batch: %+v, %v; want the one device event", b, err)
	}
	if ev := b.Events[0]; ev.Kind != KindDevice || ev.Device == nil || ev.Device.What != DeviceBrokerUp || b.Next != ev.Seq {
		t.Errorf("first batch: got %+v (next %d), want a broker_up device event and next = its seq", ev, b.Next)
	}

	// Events pruned before the watcher read them: it is told, once, and
	// goes on after the newest.
	burst(t, eng)
	b, err = w.Next(ctx)
	if err != nil || !b.Skipped || len(b.Events) != 0 || b.Next != eng.LastSeq() {
		t.Fatalf("after a prune: %+v, %v; want skipped to %d", b, err, eng.LastSeq())
	}
	if err := srv.RecordDeviceEvent(ctx, DeviceEvent{What: DeviceBrokerDown, Error: "refused"}); err != nil {
		t.Fatal(err)
	}
	b, err = w.Next(ctx)
	if err != nil || b.Skipped || len(b.Events) != 1 || b.Events[0].Device.What != DeviceBrokerDown {
		t.Fatalf("after the skip: %+v, %v; want the next event", b, err)
	}

	// ReadEvents answers the same way without waiting.
	rb, err := srv.ReadEvents(ctx, 1, 0)
	if err != nil || !rb.Skipped || rb.Next != eng.LastSeq() {
		t.Errorf("ReadEvents of pruned events: %+v, %v; want skipped to %d", rb, err, eng.LastSeq())
	}
	rb, err = srv.ReadEvents(ctx, eng.LastSeq()-1, 0)
	if err != nil || rb.Skipped || len(rb.Events) != 1 || rb.Next != eng.LastSeq() {
		t.Errorf("ReadEvents of the last event: %+v, %v", rb, err)
	}
}

// TestWatchOverHTTP follows the stream through the handlers, as the CLI
// would over the control socket: a watcher that was away while events were
// pruned is told so first, then gets the new events as they are committed.
func TestWatchOverHTTP(t *testing.T) {
	eng := pruningEngine(t)
	srv := New(Options{Engines: Only(eng), Internal: true})
	hc, stop := InProcess(srv)
	defer stop()
	c := NewClient(hc, "in-process")
	burst(t, eng)
	newest := eng.LastSeq()
	ctx := context.Background()
	var got []EventBatch
	done := errors.New("done")
	errc := make(chan error, 1)
	go func() {
		errc <- c.Watch(ctx, 1, func(b EventBatch) error {
			got = append(got, b)
			if len(got) == 1 {
				// The skip came: commit an event for the next batch.
				if err := srv.RecordDeviceEvent(ctx, DeviceEvent{What: DeviceBrokerUp}); err != nil {
					return err
				}
				return nil
			}
			return done
		})
	}()
	if err := <-errc; !errors.Is(err, done) {
		t.Fatalf("Watch returned %v, want fn's error", err)
	}
	if b := got[0]; !b.Skipped || len(b.Events) != 0 || b.Next != newest {
		t.Errorf("first batch %+v: want skipped to %d", b, newest)
	}
	if b := got[1]; b.Skipped || len(b.Events) != 1 || b.Events[0].Seq != newest+1 || b.Events[0].Kind != KindDevice || b.Next != newest+1 {
		t.Errorf("second batch %+v: want the device event %d", b, newest+1)
	}

	// A since after the newest event is refused at once.
	err := c.Watch(ctx, eng.LastSeq()+10, func(EventBatch) error { return nil })
	if ae, ok := errors.AsType[*Error](err); !ok || ae.Code != CodeInvalid {
		t.Errorf("watch after the newest: %v, want invalid", err)
	}
}

// TestEventBatchGolden pins the watch's JSON, one line of
// GET /api/events/watch: a batch of events, and a skip.
func TestEventBatchGolden(t *testing.T) {
	at := time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)
	golden(t, "event_batches", []EventBatch{
		{Events: EventViews([]engine.Event{{Seq: 41, Time: at, Kind: engine.KindNode, Quest: "q1", Node: "n2", Role: "scout",
			From: string(engine.Pending), To: string(engine.Running)}}), Next: 41},
		{Events: []Event{}, Skipped: true, Next: 97},
	})
}
