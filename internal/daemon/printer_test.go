package daemon

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/questbox/questbox/ui/api"
)

// The printer writes a page's lines from a buffer it reuses: it allocates
// nothing beyond the lines themselves (a busy tick prints thousands of
// events), and the lines are its format's (the command line's), one a
// line.
func TestPrinterReusesItsBuffer(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts under the race detector are its own (make test runs this without it)")
	}
	at := time.Date(2026, 12, 3, 12, 0, 5, 0, time.Local)
	var evs []api.Event
	for i := range 64 {
		evs = append(evs, api.Event{Seq: uint64(i + 1), Time: at, Kind: api.KindNode, Quest: "q1", Node: "n3", Role: "scout", From: "pending", To: "running"})
	}
	formatEvent := func(ev api.Event) string {
		return fmt.Sprintf("%s %s %s %-10s %s → %s", ev.Time.Format("15:04:05"), ev.Quest, ev.Node, ev.Role, ev.From, ev.To)
	}
	lines := testing.AllocsPerRun(10, func() {
		for _, ev := range evs {
			_ = formatEvent(ev)
		}
	})
	var out strings.Builder
	p := &printer{w: &out, format: formatEvent}
	p.print(evs)
	if want := strings.Repeat(formatEvent(evs[0])+"\n", 64); out.String() != want || p.next != 64 {
		t.Fatalf("printed %q (next %d), want 64 lines of %q", out.String()[:min(80, out.Len())], p.next, formatEvent(evs[0]))
	}
	p.w = io.Discard
	if allocs := testing.AllocsPerRun(10, func() { p.print(evs) }); allocs > lines {
		t.Errorf("printing a page allocated %.0f times, its lines %.0f", allocs, lines)
	}
}
