package update_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/internal/release"
	"github.com/questbox/questbox/internal/update"
)

var host = release.Target{OS: "linux", Arch: "amd64"}

// box is a data directory whose "store" is a plain file: the snapshot
// here is a byte copy (engine.SnapshotStore, the real one, is tested in
// engine and through cmd/questbox's update tests).
type box struct {
	t     *testing.T
	data  string
	store string
}

func newBox(t *testing.T) *box {
	data := t.TempDir()
	b := &box{t: t, data: data, store: filepath.Join(data, "questbox.db")}
	b.put("v1 data")
	return b
}

func copyBytes(src, dst string) error {
	body, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, body, 0o600)
}

func (b *box) dir(pkg string) *update.Dir {
	return b.dirWith(pkg, copyBytes)
}

func (b *box) dirWith(pkg string, snapshot func(src, dst string) error) *update.Dir {
	d, err := update.Open(b.data, b.store, pkg, snapshot)
	if err != nil {
		b.t.Fatal(err)
	}
	return d
}

func (b *box) put(v string) {
	b.t.Helper()
	if err := os.WriteFile(b.store, []byte(v), 0o600); err != nil {
		b.t.Fatal(err)
	}
}

func (b *box) get() string {
	b.t.Helper()
	v, err := os.ReadFile(b.store)
	if err != nil {
		b.t.Fatal(err)
	}
	return string(v)
}

func launch(t *testing.T, d *update.Dir) update.Decision {
	t.Helper()
	dec, err := d.Launch()
	if err != nil {
		t.Fatal(err)
	}
	return dec
}

func stage(t *testing.T, d *update.Dir, version string) {
	t.Helper()
	if _, err := d.Stage([]byte("binary "+version), release.Release{Version: version, Target: host}); err != nil {
		t.Fatal(err)
	}
}

func TestNoUpdateRunsThePackage(t *testing.T) {
	b := newBox(t)
	dec := launch(t, b.dir("v1"))
	if dec.Exec != "" || dec.Trial || dec.Slot.Version != "v1" {
		t.Fatalf("got %+v, want the packaged v1", dec)
	}
	if _, err := os.Stat(filepath.Join(b.data, "bin")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a start without an update wrote bin/: %v", err)
	}
}

func TestCommit(t *testing.T) {
	b := newBox(t)
	d := b.dir("v1")
	stage(t, d, "v2")
	if _, err := d.Commit("v2"); !errors.Is(err, update.ErrNoTrial) {
		t.Errorf("commit before the trial started: got %v, want %v", err, update.ErrNoTrial)
	}
	dec := launch(t, d)
	if want := filepath.Join(b.data, "bin", "questbox-v2"); dec.Exec != want || !dec.Trial || dec.Starts != 1 {
		t.Fatalf("got %+v, want a trial of %s", dec, want)
	}
	snap := filepath.Join(b.data, "bin", "questbox.db.pre-v2")
	if _, err := os.Stat(snap); err != nil {
		t.Fatalf("no snapshot before the trial: %v", err)
	}
	if _, err := d.Commit("v3"); !errors.Is(err, update.ErrNoTrial) {
		t.Errorf("commit of another version: got %v, want %v", err, update.ErrNoTrial)
	}
	s, err := d.Commit("v2")
	if err != nil {
		t.Fatal(err)
	}
	if s.Current.Version != "v2" || s.Previous == nil || s.Previous.Version != "v1" || s.Previous.File != "" || s.Trial != nil {
		t.Errorf("after commit: %+v", s)
	}
	if _, err := os.Stat(snap); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the snapshot is kept after the commit: %v", err)
	}
	if dec := launch(t, d); dec.Exec != filepath.Join(b.data, "bin", "questbox-v2") || dec.Trial {
		t.Errorf("the start after the commit: %+v, want v2, not on trial", dec)
	}
	// The next update keeps v2 as the previous one; v1 is the package.
	stage(t, d, "v3")
	launch(t, d)
	if s, err = d.Commit("v3"); err != nil || s.Previous.Version != "v2" {
		t.Fatalf("second commit: %+v, %v", s, err)
	}
	stage(t, d, "v4")
	launch(t, d)
	if _, err := d.Commit("v4"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(b.data, "bin", "questbox-v2")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("v2, neither current nor previous, is kept: %v", err)
	}
}

// TestRollback: a trial whose starts became READY but did not commit
// within its starts is rolled back at the next one, with the store as it
// was before its first start.
func TestRollback(t *testing.T) {
	b := newBox(t)
	d := b.dir("v1")
	stage(t, d, "v2")
	for i := 1; i <= update.DefaultTries; i++ {
		if dec := launch(t, d); !dec.Trial || dec.Starts != i {
			t.Fatalf("start %d: %+v, want the trial", i, dec)
		}
		if err := d.Ready("v2"); err != nil {
			t.Fatal(err)
		}
		b.put("written by v2, start " + string(rune('0'+i)))
	}
	dec := launch(t, d)
	if !strings.Contains(dec.Said, "it started 2 times without becoming ready and healthy") {
		t.Errorf("it said %q, want the starts it had", dec.Said)
	}
	if !dec.RolledBack || dec.Trial || dec.Exec != "" || dec.Slot.Version != "v1" {
		t.Fatalf("got %+v, want a rollback to the packaged v1", dec)
	}
	if !strings.Contains(dec.Said, "update to v2 rolled back to v1 (packaged)") {
		t.Errorf("it said %q", dec.Said)
	}
	if got := b.get(); got != "v1 data" {
		t.Errorf("the store after the rollback has %q, want %q", got, "v1 data")
	}
	left, _ := os.ReadDir(filepath.Join(b.data, "bin"))
	for _, e := range left {
		if e.Name() != "state.json" {
			t.Errorf("left behind after the rollback: %s", e.Name())
		}
	}
	s, err := d.State()
	if err != nil || s.Trial != nil || !strings.Contains(s.Last, "rolled back") {
		t.Errorf("state after the rollback: %+v, %v", s, err)
	}
	if dec := launch(t, d); dec.RolledBack || dec.Exec != "" {
		t.Errorf("the start after the rollback: %+v", dec)
	}
}

// TestRollbackOfAStartThatNeverWasReady: a trial start that did not
// become READY (it exited, hung until systemd's timeout, or crashed while
// migrating) is rolled back at the very next start, not given another:
// the box is back after one failed start. Ready of a version not on trial
// is refused.
func TestRollbackOfAStartThatNeverWasReady(t *testing.T) {
	b := newBox(t)
	d := b.dir("v1")
	if err := d.Ready("v2"); !errors.Is(err, update.ErrNoTrial) {
		t.Errorf("Ready with no trial: %v, want ErrNoTrial", err)
	}
	stage(t, d, "v2")
	if err := d.Ready("v2"); !errors.Is(err, update.ErrNoTrial) {
		t.Errorf("Ready of a trial not started yet: %v, want ErrNoTrial", err)
	}
	if dec := launch(t, d); !dec.Trial || dec.Starts != 1 {
		t.Fatalf("first start: %+v, want the trial", dec)
	}
	if err := d.Ready("v3"); !errors.Is(err, update.ErrNoTrial) {
		t.Errorf("Ready of another version: %v, want ErrNoTrial", err)
	}
	b.put("written by v2 before it hung")
	dec := launch(t, d)
	if !dec.RolledBack || dec.Trial || dec.Slot.Version != "v1" {
		t.Fatalf("second start: %+v, want a rollback to v1", dec)
	}
	if !strings.Contains(dec.Said, "its start 1 of 2 did not become ready") {
		t.Errorf("it said %q", dec.Said)
	}
	if got := b.get(); got != "v1 data" {
		t.Errorf("the store after the rollback has %q, want %q", got, "v1 data")
	}

	// Ready at the first start, a crash, no READY at the second: back.
	stage(t, d, "v3")
	launch(t, d)
	if err := d.Ready("v3"); err != nil {
		t.Fatal(err)
	}
	if dec := launch(t, d); !dec.Trial || dec.Starts != 2 {
		t.Fatalf("a trial that was ready and crashed: %+v, want its second start", dec)
	}
	if dec := launch(t, d); !dec.RolledBack || !strings.Contains(dec.Said, "its start 2 of 2 did not become ready") {
		t.Errorf("third start: %+v, want a rollback naming start 2", dec)
	}
}

func TestStageDuringTrialRefused(t *testing.T) {
	b := newBox(t)
	d := b.dir("v1")
	stage(t, d, "v2")
	stage(t, d, "v3") // not started yet: replaced
	launch(t, d)
	if _, err := d.Stage([]byte("x"), release.Release{Version: "v4", Target: host}); !errors.Is(err, update.ErrOnTrial) || !strings.Contains(err.Error(), "v3 (started 1 times)") {
		t.Errorf("got %v, want a refusal naming the trial", err)
	}
	if _, err := d.Stage([]byte("x"), release.Release{Version: "../x", Target: host}); err == nil {
		t.Error("a version with a slash was staged")
	}
}

// TestPackageWins: once the packaged binary changed (a .deb upgrade), the
// releases installed under the old package are not run.
func TestPackageWins(t *testing.T) {
	b := newBox(t)
	d := b.dir("v1")
	stage(t, d, "v2")
	launch(t, d)
	if _, err := d.Commit("v2"); err != nil {
		t.Fatal(err)
	}
	dec := launch(t, b.dir("v5"))
	if dec.Exec != "" || dec.Slot.Version != "v5" {
		t.Fatalf("after the package changed to v5: %+v, want the packaged v5", dec)
	}
	s, _ := b.dir("v5").State()
	if !strings.Contains(s.Last, "packaged questbox changed from v1 to v5") {
		t.Errorf("state says %q", s.Last)
	}
}

// TestUnsnapshottableStoreIsNotTried: a trial whose store cannot be
// copied (here: not a bbolt file, for the engine's snapshot) could not be
// undone, so it never starts.
func TestUnsnapshottableStoreIsNotTried(t *testing.T) {
	b := newBox(t)
	if err := os.WriteFile(b.store, []byte("not a bbolt file"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := b.dirWith("v1", engine.SnapshotStore)
	stage(t, d, "v2")
	dec := launch(t, d)
	if dec.Trial || dec.Exec != "" || !dec.RolledBack || !strings.Contains(dec.Said, "it was not started") {
		t.Fatalf("got %+v, want the trial refused and the packaged v1 run", dec)
	}
	if got, _ := os.ReadFile(b.store); string(got) != "not a bbolt file" {
		t.Errorf("the store was changed: %q", got)
	}
}

func TestRefused(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{release.ErrUnsigned, true},
		{release.ErrWrongTarget, true},
		{update.ErrOnTrial, true},
		{errors.New("disk full"), false},
		{nil, false},
	} {
		if got := update.Refused(tc.err); got != tc.want {
			t.Errorf("Refused(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
