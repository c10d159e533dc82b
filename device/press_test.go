package device_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/questbox/questbox/device"
)

var t0 = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)

// ev is one raw level change at an offset from t0.
type ev struct {
	at      time.Duration
	pressed bool
}

// seq builds edges from alternating press/release offsets: seq(0, 100) is one
// 100 ms press at t0.
func seq(offsets ...time.Duration) []ev {
	var out []ev
	for i, o := range offsets {
		out = append(out, ev{o, i%2 == 0})
	}
	return out
}

// chatter returns n alternating edges every step starting at start, ending
// at level end.
func chatter(start, step time.Duration, n int, end bool) []ev {
	var out []ev
	for i := range n {
		// Last edge (i == n-1) has level end; alternate backwards from there.
		level := end == ((n-1-i)%2 == 0)
		out = append(out, ev{start + time.Duration(i)*step, level})
	}
	return out
}

// classify feeds evs to a fresh Classifier and ticks until tickTo, returning
// every press with its time as an offset from t0.
func classify(tm device.Timing, evs []ev, tickTo time.Duration) []string {
	c := device.NewClassifier(tm, false, t0)
	var got []string
	add := func(ps []device.Press) {
		for _, p := range ps {
			got = append(got, fmt.Sprintf("%s@%s", p, p.At.Sub(t0)))
		}
	}
	for _, e := range evs {
		add(c.Edge(e.pressed, t0.Add(e.at)))
	}
	// Tick at each deadline, as Run's timer would.
	for {
		at, ok := c.Deadline()
		if !ok || at.After(t0.Add(tickTo)) {
			break
		}
		add(c.Tick(at))
	}
	return got
}

func TestClassifier(t *testing.T) {
	var (
		s = time.Second
		d = device.Timing{}
	)
	join := func(evs ...[]ev) []ev {
		var out []ev
		for _, e := range evs {
			out = append(out, e...)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		tm   device.Timing
		evs  []ev
		want string
	}{
		{"nothing", d, nil, ""},
		{"short", d, seq(0, 100*ms), "short@500ms"}, // released at 100ms + 400ms gap
		{"double is a short with count 2", d, seq(0, 100*ms, 300*ms, 400*ms), "short x2@800ms"},
		{"triple fires at the third release", d, seq(0, 100*ms, 300*ms, 400*ms, 600*ms, 700*ms), "triple@750ms"},
		{"four quick presses: triple then short", d, seq(0, 100*ms, 300*ms, 400*ms, 600*ms, 700*ms, 900*ms, 1000*ms), "triple@750ms short@1.4s"},
		{"long fires when the hold reaches 2s", d, seq(0, 5*s), "long (2s)@2s"},
		{"long exactly at threshold", d, seq(0, 2*s), "long (2s)@2s"},
		{"release just before long is short", d, seq(0, 2*s-ms), "short@2.399s"},
		{"slow presses are separate shorts", d, seq(0, 100*ms, 600*ms, 700*ms), "short@500ms short@1.1s"},
		{"tap then hold is one long", d, seq(0, 100*ms, 300*ms, 3*s), "long (2s)@2.3s"},
		{"pulse shorter than debounce is ignored", d, seq(0, 49*ms), ""},
		{"chatter then 2s hold is exactly one long", d,
			join(chatter(0, 4*ms, 11, true), chatter(2100*ms, 3*ms, 9, false)), "long (2s)@2.04s"},
		{"chatter within the window then short", d,
			join(chatter(0, 5*ms, 7, true), chatter(200*ms, 5*ms, 7, false)), "short@630ms"},
		{"bounce during a hold does not split it", d,
			join(seq(0), chatter(1*s, 10*ms, 2, true), []ev{{3 * s, false}}), "long (2s)@2s"},
		{"release during a hold, then hold again", d, seq(0, 1500*ms, 1700*ms, 4*s), "long (2s)@3.7s"},
		{"release bouncing across the long threshold counts to its last edge", d,
			join(seq(0), chatter(1990*ms, 10*ms, 3, false)), "long (2s)@2s"},
		{"bounce across the long threshold is still long", d,
			join(seq(0), chatter(1990*ms, 20*ms, 2, true), []ev{{3 * s, false}}), "long (2s)@2s"},
		{"custom thresholds", device.Timing{Debounce: 10 * ms, LongPress: 500 * ms, MultiPressGap: 100 * ms},
			seq(0, 50*ms, 1*s, 2*s), "short@150ms long (500ms)@1.5s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(classify(tc.tm, tc.evs, 10*s), " ")
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestClassifierIgnoresPressHeldAtStart(t *testing.T) {
	c := device.NewClassifier(device.Timing{}, true, t0)
	var got []device.Press
	got = append(got, c.Tick(t0.Add(5*time.Second))...)
	got = append(got, c.Edge(false, t0.Add(6*time.Second))...)
	got = append(got, c.Tick(t0.Add(10*time.Second))...)
	if len(got) != 0 {
		t.Fatalf("got %v, want no press for a button held at start", got)
	}
	// The next press is recognised normally.
	got = append(got, c.Edge(true, t0.Add(11*time.Second))...)
	got = append(got, c.Edge(false, t0.Add(11100*time.Millisecond))...)
	got = append(got, c.Tick(t0.Add(20*time.Second))...)
	if len(got) != 1 || got[0].Kind != device.Short {
		t.Fatalf("got %v, want one short", got)
	}
}

func TestClassifierLateEdges(t *testing.T) {
	// Edges fed after their deadlines passed (a loop that fell behind) still
	// classify by their own times.
	c := device.NewClassifier(device.Timing{}, false, t0)
	var got []device.Press
	got = append(got, c.Edge(true, t0)...)
	got = append(got, c.Edge(false, t0.Add(3*time.Second))...)
	got = append(got, c.Tick(t0.Add(10*time.Second))...)
	if len(got) != 1 || got[0].Kind != device.Long || !got[0].At.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("got %v, want one long at 2s", got)
	}
}
