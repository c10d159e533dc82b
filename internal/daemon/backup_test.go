package daemon

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/internal/daemon/daemontest"
)

// TestScheduledBackups drives the daemon's backup loop with ticks of our
// own: each makes a verified backup named for its time, the oldest beyond
// keep go, and a backup that fails is logged while the loop goes on.
func TestScheduledBackups(t *testing.T) {
	st, err := engine.OpenStore(t.TempDir(), engine.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	eng, err := engine.New(st, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Shutdown(0)
	// run drives a loop over dir with ticks at times, and returns its log.
	run := func(dir string, times ...time.Time) string {
		var logs daemontest.SyncBuffer
		ticks := make(chan time.Time) // unbuffered: each send is taken
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			backups{eng: eng, dir: dir, keep: 2, log: slog.New(slog.NewTextHandler(&logs, nil))}.run(ctx, ticks)
		}()
		for _, at := range times {
			ticks <- at
		}
		cancel()
		<-done // after the last backup
		return logs.String()
	}
	dir := filepath.Join(t.TempDir(), "backups")
	start := time.Date(2026, 12, 3, 4, 0, 0, 0, time.UTC)
	logs := run(dir, start, start.Add(24*time.Hour), start.Add(48*time.Hour))
	got, _ := filepath.Glob(filepath.Join(dir, "*"))
	want := []string{filepath.Join(dir, "questbox-20261204-040000.db"), filepath.Join(dir, "questbox-20261205-040000.db")}
	if !slices.Equal(got, want) {
		t.Errorf("kept %v, want %v", got, want)
	}
	if n := strings.Count(logs, "scheduled backup written and verified"); n != 3 {
		t.Errorf("%d backups logged, want 3:\n%s", n, logs)
	}
	// A directory that cannot be made: logged, and the next tick tries again.
	blocked := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocked, nil, 0o600)
	logs = run(filepath.Join(blocked, "backups"), start, start.Add(time.Hour))
	if n := strings.Count(logs, "scheduled backup failed"); n != 2 {
		t.Errorf("%d failures logged, want 2:\n%s", n, logs)
	}
}
