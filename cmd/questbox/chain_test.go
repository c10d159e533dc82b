package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/questbox/questbox/internal/daemon/daemontest"
	"github.com/questbox/questbox/ui/api"
)

// TestDemoTeamAcceptedBeforeTheSecondTick is the acceptance of follow-up
// dispatch (docs/design.md, "When work is dispatched") from outside: the
// real daemon, `run --demo --tick 60s`. Its first tick dispatches the root
// Team's planner; every stage after it (executer, accepter rejecting,
// executer, accepter accepting, 2 s each for the demo agent) follows its
// predecessor's commit, so the Team is accepted well before the second
// tick, whose owner turn then seats the council. The test waits on the
// daemon's own signals (sd_notify: READY, then WATCHDOG after each tick)
// and reads the order from the event log.
func TestDemoTeamAcceptedBeforeTheSecondTick(t *testing.T) {
	data := daemontest.ShortDir(t)
	notify := daemontest.ListenNotify(t, filepath.Join(data, "notify"))
	t.Setenv("NOTIFY_SOCKET", notify.LocalAddr().String())
	startDaemon(t, data, "--demo", "--tick", "60s", "--gpio", "sim", "--listen", "127.0.0.1:0")

	// The first tick comes within a minute (ticks fall on the minute),
	// the second one a minute later: bounded generously for a loaded
	// machine.
	ticks := 0
	deadline := time.Now().Add(4 * time.Minute)
	for ticks < 2 {
		notify.SetReadDeadline(deadline)
		buf := make([]byte, 256)
		n, err := notify.Read(buf)
		if err != nil {
			t.Fatalf("after %d ticks: no sd_notify message: %v", ticks, err)
		}
		if strings.Contains(string(buf[:n]), "WATCHDOG=1") {
			ticks++
		}
	}

	sock := filepath.Join(data, "questbox.sock")
	c := api.NewClient(api.SocketClient(sock), sock)
	var evs []api.Event
	for since := uint64(0); ; {
		page, err := c.Events(context.Background(), since, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Events) == 0 {
			break
		}
		evs = append(evs, page.Events...)
		since = page.Next
	}
	var planner, accepted, council *api.Event
	for i := range evs {
		ev := &evs[i]
		switch {
		case ev.Kind != api.KindNode:
		case planner == nil && ev.Stage == "plan" && ev.To == "running":
			planner = ev
		case accepted == nil && ev.Node == "n1" && ev.From == "revising" && ev.To == "passed":
			accepted = ev
		case council == nil && ev.Role == "owner" && ev.To == "council_pending":
			council = ev
		}
	}
	if planner == nil || accepted == nil || council == nil {
		t.Fatalf("after two ticks: planner dispatch %v, Team accepted %v, council seated %v; want all three", planner, accepted, council)
	}
	t.Logf("planner dispatched at %s (seq %d), Team n1 accepted %s later (seq %d), council seated at the second tick (seq %d)",
		planner.Time.Format(time.TimeOnly), planner.Seq, accepted.Time.Sub(planner.Time), accepted.Seq, council.Seq)
	// The order: the second tick's owner turn seated the council after the
	// accept, and the accept fell in the first tick's minute.
	if !(planner.Seq < accepted.Seq && accepted.Seq < council.Seq) {
		t.Errorf("event order: planner %d, accept %d, council %d; want the accept between the first tick and the second", planner.Seq, accepted.Seq, council.Seq)
	}
	if first := planner.Time.Truncate(time.Minute); !accepted.Time.Before(first.Add(time.Minute)) {
		t.Errorf("the Team was accepted at %s, after the second tick at %s", accepted.Time, first.Add(time.Minute))
	}
	if took := accepted.Time.Sub(planner.Time); took > 30*time.Second {
		t.Errorf("the Team was accepted %s after its planner's dispatch, want within 30s", took)
	}
}
