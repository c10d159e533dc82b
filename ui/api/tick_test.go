package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/engine/agent"
)

// The tick's answer, written event by event, is byte for byte what
// writeJSON gives for the same Tick.
func TestWriteTickIsWriteJSON(t *testing.T) {
	at := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	evs := []Event{
		{Seq: 7, Time: at, Kind: "node", Quest: "q1", Node: "n2", From: "pending", To: "running"},
		{Seq: 8, Time: at, Kind: "verdict", Quest: "q1", Node: "n2", Outcome: "FAIL", Feedback: "<b>not json</b> & \"quoted\"\n",
			Facts: []Fact{{Rule: "json", Level: "fail", Where: "answer", Expected: "{", Actual: "<"}}, Used: &Used{AgentRuns: 3, WallClock: "1m"}},
		{Seq: 9, Time: at, Kind: "device", Device: &DeviceEvent{}},
	}
	for _, tt := range []struct {
		name string
		head Tick
		evs  []Event
	}{
		{"empty", Tick{Dispatched: []string{}, Resumed: []string{}, Finished: []string{}, Terminated: []string{}}, nil},
		{"one event", Tick{Dispatched: []string{"n2"}, Resumed: []string{}, Finished: []string{}, Terminated: []string{}}, evs[:1]},
		{"every field", Tick{Dispatched: []string{"n2", "n5"}, Resumed: []string{"n3"}, Finished: []string{"q2"}, Terminated: []string{"q3"}}, evs},
	} {
		t.Run(tt.name, func(t *testing.T) {
			whole := tt.head
			whole.Events = append([]Event{}, tt.evs...)
			want := httptest.NewRecorder()
			writeJSON(want, http.StatusOK, whole)
			var got bytes.Buffer
			err := writeTick(&got, tt.head, func(yield func(Event) error) error {
				for _, ev := range tt.evs {
					if err := yield(ev); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != want.Body.String() {
				t.Errorf("got\n%s\nwant\n%s", got.String(), want.Body.String())
			}
		})
	}
}

// An error while the events are read leaves the answer unterminated, so
// that no client decodes it as whole.
func TestWriteTickCutShort(t *testing.T) {
	var got bytes.Buffer
	failed := errors.New("the store went away")
	err := writeTick(&got, Tick{}, func(yield func(Event) error) error {
		if err := yield(Event{Seq: 1, Kind: "node"}); err != nil {
			return err
		}
		return failed
	})
	if !errors.Is(err, failed) {
		t.Fatalf("got %v, want %v", err, failed)
	}
	var tk Tick
	if err := json.Unmarshal(got.Bytes(), &tk); err == nil {
		t.Errorf("a cut answer decoded as a whole Tick: %s", got.String())
	}
}

// POST /api/tick over more events than a page: every event after the tick
// began, in order, as one read of them gives.
func TestTickAnswerCarriesEveryEvent(t *testing.T) {
	st, err := engine.OpenStore(t.TempDir(), engine.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(st, engine.Options{Providers: map[string]engine.Provider{"demo": agent.Demo{}}, MaxParallel: 200})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		eng.Shutdown(0)
		st.Close()
	})
	for i := range 150 {
		s := eng.NewQuestSpec(fmt.Sprint("quest ", i), "find the best thing")
		s.Provider = "demo"
		if _, err := eng.NewQuest(s); err != nil {
			t.Fatal(err)
		}
	}
	srv := New(Options{Engines: Only(eng)})
	since := eng.LastSeq()
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequestWithContext(context.Background(), http.MethodPost, "/api/tick", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("POST /api/tick: %d %s", rec.Code, rec.Body)
	}
	var got Tick
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatalf("decode: %v", err)
	}
	evs, err := eng.Events(since, 100000)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) <= tickEventsPage {
		t.Fatalf("the tick made %d events, want more than a page (%d)", len(evs), tickEventsPage)
	}
	if want := EventViews(evs); !reflect.DeepEqual(got.Events, want) {
		t.Errorf("the answer has %d events, want the %d after seq %d", len(got.Events), len(want), since)
	}
	if len(got.Dispatched) != 150 {
		t.Errorf("dispatched %d, want 150", len(got.Dispatched))
	}
}

// The events of a tick's answer are encoded into one buffer reused from
// event to event, not each marshalled and indented anew (a busy tick's
// answer carries thousands). What is left is an event's own: the value
// handed to the encoder and its time's JSON, 2 an event; MarshalIndent
// allocated 2 more, its JSON twice.
func TestWriteTickReusesItsBuffer(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts under the race detector are its own")
	}
	at := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	ev := Event{Seq: 8, Time: at, Kind: "verdict", Quest: "q1", Node: "n2", Outcome: "FAIL", Feedback: "not json",
		Facts: []Fact{{Rule: "json", Level: "fail", Where: "answer", Expected: "{", Actual: "<"}}}
	const events = 200
	allocs := testing.AllocsPerRun(5, func() {
		err := writeTick(io.Discard, Tick{}, func(yield func(Event) error) error {
			for range events {
				if err := yield(ev); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	if allocs >= 3*events {
		t.Errorf("writing %d events allocated %.0f times: more than 3 an event", events, allocs)
	}
}
