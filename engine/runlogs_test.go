package engine

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/runlog"
)

// How a run ended is on its record and at the end of its log: aborted
// (killed), cut by the daemon's shutdown (interrupted), its provider
// unreachable (deferred), and answered; each run is named by the node's
// count of runs.
func TestRunExits(t *testing.T) {
	dir := t.TempDir()
	logs, err := runlog.Open(filepath.Join(dir, "logs"), runlog.MinPerRun, 16*runlog.MinPerRun)
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan string, 4)
	prov := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		fmt.Fprintf(req.Log, "working on %s\n", req.Node)
		switch req.Hypothesis {
		case "hang":
			started <- req.Node
			<-ctx.Done()
			return agent.Reply{}, ctx.Err()
		case "unreachable":
			return agent.Reply{}, fmt.Errorf("no route: %w", agent.ErrUnavailable)
		}
		return reply(answer("dead", "it does not work.")), nil
	})
	h := newHarness(t, Options{Providers: map[string]Provider{"p": prov}, Logs: logs, MaxParallel: 4})
	for _, hyp := range []string{"hang", "unreachable", "fine"} {
		h.quest(func(s *QuestSpec) { s.Provider, s.Direction, s.Mode, s.Roles = "p", hyp, ModeSolo, []string{RoleScout} })
	}
	if _, err := h.e.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	n1 := <-started
	if _, err := h.e.AbortNode(n1, "enough"); err != nil {
		t.Fatal(err)
	}
	h.e.Wait()
	// A run the shutdown cuts: the next run of the first quest's
	// hanging root is gone, so hang a new quest.
	h.quest(func(s *QuestSpec) {
		s.Provider, s.Direction, s.Mode, s.Roles = "p", "hang", ModeSolo, []string{RoleScout}
	})
	h.clock.Advance(60e9)
	if _, err := h.e.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-started
	h.e.Shutdown(0)

	runs, err := h.e.QuestRuns("", "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"q1": ExitKilled, "q2": ExitDeferred, "q3": ExitAnswered, "q4": ExitInterrupted}
	seen := map[string]bool{}
	for _, r := range runs {
		if seen[r.Quest] {
			continue // a deferred node's next try
		}
		seen[r.Quest] = true
		if r.Exit != want[r.Quest] {
			t.Errorf("run %s of %s ended %q, want %q", r.ID, r.Quest, r.Exit, want[r.Quest])
		}
		if r.Name != domain.RunName(r.Quest, r.Node, 1) || r.Role != RoleScout || r.BytesIn == 0 {
			t.Errorf("run %+v: want its name, role and prompt bytes", r)
		}
		var log bytes.Buffer
		if err := h.e.RunLog(context.Background(), &log, r.ID, false); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(log.String(), "working on "+r.Node) || !strings.Contains(log.String(), "── end: "+want[r.Quest]) {
			t.Errorf("log of %s:\n%s", r.ID, log.String())
		}
	}
	if len(seen) != 4 {
		t.Errorf("runs of %d quests, want 4: %+v", len(seen), runs)
	}
	if r, err := h.e.FindRun("quest:q3:n3:1"); err != nil || r.Quest != "q3" {
		t.Errorf("FindRun by name: %+v, %v", r, err)
	}
}

// A run's result commits only after its log is durable: the group commit
// that records it syncs the logs closed so far first (one sync for the
// whole batch), so no write transaction begins while a closed log waits
// for its sync.
func TestRunLogDurableBeforeResultCommits(t *testing.T) {
	dir := t.TempDir()
	logs, err := runlog.Open(filepath.Join(dir, "logs"), runlog.MinPerRun, 64*runlog.MinPerRun)
	if err != nil {
		t.Fatal(err)
	}
	prov := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		fmt.Fprintf(req.Log, "working on %s\n", req.Node)
		return reply(answer("dead", "it does not work.")), nil
	})
	h := newHarness(t, Options{Providers: map[string]Provider{"p": prov}, Logs: logs, MaxParallel: 1})
	var writes, unsyncedAtWrite int
	h.store.h.WriteFault = func() error {
		// Called by the writer (one at a time) as each transaction begins.
		writes++
		if logs.Unsynced() > 0 {
			unsyncedAtWrite++
		}
		return nil
	}
	const quests = 3
	for range quests {
		h.quest(func(s *QuestSpec) {
			s.Provider, s.Direction, s.Mode, s.Roles = "p", "fine", ModeSolo, []string{RoleScout}
		})
	}
	for range quests {
		if _, err := h.e.Tick(context.Background()); err != nil {
			t.Fatal(err)
		}
		h.e.Wait()
		h.clock.Advance(60e9)
	}
	h.store.h.WriteFault = nil
	runs, err := h.e.QuestRuns("", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != quests {
		t.Fatalf("got %d runs, want %d", len(runs), quests)
	}
	if writes < 2*quests {
		t.Errorf("saw %d write transactions, want at least %d (a dispatch and a result per run)", writes, 2*quests)
	}
	if unsyncedAtWrite > 0 {
		t.Errorf("%d of %d write transactions began with a closed run log not yet synced", unsyncedAtWrite, writes)
	}
	for _, r := range runs {
		var log bytes.Buffer
		if err := h.e.RunLog(context.Background(), &log, r.ID, false); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(log.String(), "── end: ") {
			t.Errorf("log of %s has no end line: %q", r.ID, log.String())
		}
	}
}
