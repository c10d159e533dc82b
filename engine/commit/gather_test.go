package commit

import (
	"testing"
	"time"
)

// gather, the leader's decision, on the arrivals that matter: with a
// caller waiting on its commit (submit, consent), and with only results
// queued as data, whose batch waits out a longer gap, never past the
// callers' latency. The knobs are the store's own.
func TestGroupCommitGathers(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	k := (&Store{}).gatherKnobs()
	if k != (gatherKnobs{latency: time.Second, gap: 100 * time.Millisecond, dataLatency: time.Second, dataGap: time.Second}) {
		t.Fatalf("the store's knobs are %+v: the cases below are written for 1s, 100ms, 1s, 1s", k)
	}
	// waiting: the same state with its oldest queued write a caller's.
	waiting := func(st gatherState) gatherState { st.caller = st.oldest; return st }
	tests := []struct {
		name  string
		now   time.Time
		st    gatherState
		until time.Time // zero: commit now
	}{
		{"a lone write commits at once", ms(0), waiting(gatherState{oldest: ms(0), last: ms(0), queued: 1}), time.Time{}},
		{"a lone write long after the one before", ms(5000), waiting(gatherState{oldest: ms(5000), last: ms(5000), queued: 1, lastBurst: ms(0)}), time.Time{}},
		{"a burst waits for the next write", ms(30), waiting(gatherState{oldest: ms(0), last: ms(20), queued: 5}), ms(120)},
		{"one write just after a batch of several is a burst", ms(5), waiting(gatherState{oldest: ms(0), last: ms(0), queued: 1, lastBurst: ms(0)}), ms(100)},
		{"a burst with no run left out commits at once", ms(30), waiting(gatherState{oldest: ms(0), last: ms(20), queued: 5, quiet: true}), time.Time{}},
		{"announced writes are waited for, runs out or not", ms(10), waiting(gatherState{oldest: ms(0), last: ms(0), queued: 2, coming: 1, quiet: true}), ms(1000)},
		{"a burst that paused for a gap commits", ms(121), waiting(gatherState{oldest: ms(0), last: ms(20), queued: 5}), time.Time{}},
		{"a burst never past the latency bound", ms(950), waiting(gatherState{oldest: ms(0), last: ms(940), queued: 200}), ms(1000)},
		{"at the latency bound it commits", ms(1000), waiting(gatherState{oldest: ms(0), last: ms(999), queued: 200}), time.Time{}},
		{"announced writes are waited for", ms(10), waiting(gatherState{oldest: ms(0), last: ms(0), queued: 1, coming: 3}), ms(1000)},
		{"announced writes, not past the bound", ms(1000), waiting(gatherState{oldest: ms(0), last: ms(0), queued: 1, coming: 3}), time.Time{}},
		{"a full batch commits", ms(10), waiting(gatherState{oldest: ms(0), last: ms(9), queued: groupMax, coming: 3}), time.Time{}},

		{"a lone result commits at once", ms(0), gatherState{oldest: ms(0), last: ms(0), queued: 1}, time.Time{}},
		{"results wait out the data gap", ms(130), gatherState{oldest: ms(300), last: ms(320), queued: 5}, ms(1300)},
		{"results wait out the data gap, not past the latency", ms(130), gatherState{oldest: ms(0), last: ms(20), queued: 5}, ms(1000)},
		{"results that paused for the data gap commit", ms(1020), gatherState{oldest: ms(0), last: ms(20), queued: 5}, time.Time{}},
		{"a result soon after a batch of results waits for more", ms(600), gatherState{oldest: ms(500), last: ms(500), queued: 1, lastBurst: ms(0)}, ms(1500)},
		{"results with no run left out commit at once", ms(30), gatherState{oldest: ms(0), last: ms(20), queued: 5, quiet: true}, time.Time{}},
		{"results never past the data latency", ms(950), gatherState{oldest: ms(0), last: ms(940), queued: 200}, ms(1000)},
		{"at the data latency results commit", ms(1000), gatherState{oldest: ms(0), last: ms(999), queued: 200}, time.Time{}},
		{"announced results are waited for up to the data latency", ms(10), gatherState{oldest: ms(0), last: ms(0), queued: 1, coming: 3}, ms(1000)},
		{"a full batch of results commits", ms(10), gatherState{oldest: ms(0), last: ms(9), queued: groupMax}, time.Time{}},
		{"a caller behind results takes back the gap", ms(950), gatherState{oldest: ms(0), caller: ms(500), last: ms(900), queued: 200}, ms(1000)},
		{"a caller behind results: a pause of the gap commits", ms(1000), gatherState{oldest: ms(0), caller: ms(500), last: ms(900), queued: 200}, time.Time{}},
		{"a caller behind results: the results' latency comes first", ms(990), gatherState{oldest: ms(0), caller: ms(500), last: ms(980), queued: 200}, ms(1000)},
		{"a caller behind results commits with them", ms(1000), gatherState{oldest: ms(0), caller: ms(500), last: ms(999), queued: 200}, time.Time{}},
		{"results behind an old caller commit at the caller's latency", ms(1000), gatherState{oldest: ms(0), caller: ms(0), last: ms(990), queued: 3, coming: 2}, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			until, wait := gather(tt.now, tt.st, k)
			if wait != !tt.until.IsZero() || !until.Equal(tt.until) {
				t.Errorf("gather at %v: got %v, %v; want %v, %v", tt.now.Sub(t0), until.Sub(t0), wait, tt.until.Sub(t0), !tt.until.IsZero())
			}
		})
	}
}
