package api

import (
	"testing"
	"time"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/engine/domain"
)

// TestWallClockFiguresAgree: the seconds and the text of a wall-clock
// figure follow one rule (whole seconds, truncated), and used + remaining
// is the budget to the second.
func TestWallClockFiguresAgree(t *testing.T) {
	for _, used := range []time.Duration{0, 153600 * time.Millisecond, 999 * time.Millisecond, 90*time.Minute + 500*time.Millisecond, 24*time.Hour - time.Millisecond} {
		q := &engine.Quest{ID: "q1", Limits: engine.Limits{WallClock: 24 * time.Hour}, Counters: engine.Counters{WallUsed: used},
			Counts: domain.CountsOf(map[engine.Status]int{})}
		v := QuestView(q)
		for _, f := range []struct {
			name string
			secs int64
			text string
		}{{"used", v.Used.WallClockSeconds, v.Used.WallClock}, {"remaining", v.Remaining.WallClockSeconds, v.Remaining.WallClock},
			{"limit", v.Limits.WallClockSeconds, v.Limits.WallClock}} {
			if want := (time.Duration(f.secs) * time.Second).String(); f.text != want {
				t.Errorf("used %s: %s is %d s but reads %q, want %q", used, f.name, f.secs, f.text, want)
			}
		}
		if sum := v.Used.WallClockSeconds + v.Remaining.WallClockSeconds; sum != v.Limits.WallClockSeconds {
			t.Errorf("used %s: used %d + remaining %d = %d, want the limit %d", used, v.Used.WallClockSeconds,
				v.Remaining.WallClockSeconds, sum, v.Limits.WallClockSeconds)
		}
	}
}
