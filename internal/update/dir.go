package update

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/questbox/questbox/internal/release"
)

// DefaultTries is how many starts a trial gets to commit.
const DefaultTries = 2

var (
	// ErrNoTrial is returned by Commit when there is no trial of the
	// running version to commit.
	ErrNoTrial = errors.New("no update on trial for this version")
	// ErrOnTrial is returned by Stage (and Install) when a release is on
	// trial already: it is judged by its own starts first.
	ErrOnTrial = errors.New("an update is on trial")
)

// Dir is the binaries of one data directory.
type Dir struct {
	data  string // the data directory
	bin   string // data/bin
	store string // the store file
	pkg   string // the packaged binary's version
	copy  func(src, dst string) error
	// Tries is how many starts a trial gets; DefaultTries when 0.
	Tries int
}

// Open returns the Dir of data, whose store is the file store, for a box
// whose packaged binary is version pkg. snapshot copies the store
// consistently to a new file (engine.SnapshotStore: the store's format is
// the engine's business). Open writes nothing: data/bin is made by the
// first Stage.
func Open(data, store, pkg string, snapshot func(src, dst string) error) (*Dir, error) {
	return &Dir{data: data, bin: filepath.Join(data, "bin"), store: store, pkg: pkg, copy: snapshot}, nil
}

func (d *Dir) tries() int {
	if d.Tries > 0 {
		return d.Tries
	}
	return DefaultTries
}

// State returns the current state.
func (d *Dir) State() (State, error) { return d.readState() }

// Stage installs binary, which release.Check accepted as r, as the next
// trial: the next start runs it. A trial that had not started yet is
// replaced; one that is running is refused, so that a trial is judged by
// its own starts.
func (d *Dir) Stage(binary []byte, r release.Release) (State, error) {
	s, err := d.readState()
	if err != nil {
		return State{}, err
	}
	if s.Trial != nil && s.Trial.Starts > 0 {
		return s, fmt.Errorf("%w: %s (started %d times); wait until it is committed or rolled back", ErrOnTrial, s.Trial.Version, s.Trial.Starts)
	}
	if strings.ContainsAny(r.Version, "/\\") || r.Version == "" || r.Version == "." || r.Version == ".." {
		return s, fmt.Errorf("update: version %q cannot name a file", r.Version)
	}
	name := "questbox-" + r.Version
	if err := os.MkdirAll(d.bin, 0o750); err != nil {
		return s, fmt.Errorf("update: %w", err)
	}
	if err := writeAtomic(filepath.Join(d.bin, name), binary, 0o750); err != nil {
		return s, fmt.Errorf("update: %w", err)
	}
	s.Trial = &Trial{Slot: Slot{Version: r.Version, File: name}}
	s.Last = ""
	if err := d.writeState(s); err != nil {
		return s, fmt.Errorf("update: %w", err)
	}
	// Run as root (sudo questbox update), the files would be root's and
	// the daemon's user could not commit: they get the data directory's
	// owner.
	if err := d.chownLikeData(d.bin, filepath.Join(d.bin, name), filepath.Join(d.bin, stateFile)); err != nil {
		return s, fmt.Errorf("update: %w", err)
	}
	return s, nil
}

func (d *Dir) chownLikeData(paths ...string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	fi, err := os.Stat(d.data)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	for _, p := range paths {
		if err := os.Lchown(p, int(st.Uid), int(st.Gid)); err != nil {
			return err
		}
	}
	return nil
}

// Decision is what Launch decided.
type Decision struct {
	// Exec is the binary to execute in place of the running one; "" means
	// the running (packaged) binary goes on.
	Exec string
	// Slot is what runs.
	Slot Slot
	// Trial says Slot is on trial (start Starts of Tries).
	Trial  bool
	Starts int
	// RolledBack says a trial was rolled back at this start.
	RolledBack bool
	// Said is what happened, for the journal; "" when nothing did.
	Said string
}

// Launch decides which binary this start runs; the packaged binary calls
// it first thing in `questbox run`. When it returns an error the caller
// runs the packaged binary: it always works. A trial gets its start counted (and,
// at its first start, the store snapshotted); a trial out of starts is
// rolled back: its snapshot put back and the committed binary run.
func (d *Dir) Launch() (Decision, error) {
	s, err := d.readState()
	if err != nil {
		return Decision{}, err
	}
	var dec Decision
	if t := s.Trial; t != nil {
		if why := d.failed(t); why != "" {
			said, err := d.rollback(&s, why)
			if err != nil {
				return Decision{}, err
			}
			dec.RolledBack, dec.Said = true, said
		} else {
			if t.Starts == 0 {
				if t.Snapshot, err = d.snapshot(t.Version); err != nil {
					// A trial that could not be undone is not started.
					said, rerr := d.rollback(&s, fmt.Sprintf("it was not started: %v", err))
					if rerr != nil {
						return Decision{}, rerr
					}
					dec.RolledBack, dec.Said = true, said
					dec.Slot = s.Current
					if s.Current.File != "" {
						dec.Exec = filepath.Join(d.bin, s.Current.File)
					}
					return dec, nil
				}
			}
			t.Starts++
			if err := d.writeState(s); err != nil {
				return Decision{}, fmt.Errorf("update: %w", err)
			}
			dec.Trial, dec.Starts = true, t.Starts
			dec.Slot, dec.Exec = t.Slot, filepath.Join(d.bin, t.File)
			dec.Said = fmt.Sprintf("starting %s on trial (start %d of %d; it is kept once it has been ready and healthy for the settling time)", t.Version, t.Starts, d.tries())
			return dec, nil
		}
	}
	dec.Slot = s.Current
	if s.Current.File != "" {
		dec.Exec = filepath.Join(d.bin, s.Current.File)
	}
	return dec, nil
}

// failed says why trial t is over, "" when it gets another start. A
// start that never became READY (it exited, crashed, hung until systemd's
// start timeout or was stopped first) ends the trial at once: waiting for
// a second start would double the time the box is down for a fault that
// a start-up does not outgrow. A trial that became READY and then died
// gets its Tries starts (a power cut or a crash of its first minutes
// should not undo an update that works).
func (d *Dir) failed(t *Trial) string {
	switch {
	case t.Starts > 0 && t.Ready < t.Starts:
		return fmt.Sprintf("its start %d of %d did not become ready (it exited, crashed, hung or was stopped before READY)", t.Starts, d.tries())
	case t.Starts >= d.tries():
		return fmt.Sprintf("it started %d times without becoming ready and healthy for the settling time", t.Starts)
	}
	return ""
}

// Ready records that this start of the trial of version became READY
// (the daemon calls it when it tells systemd READY=1). ErrNoTrial when
// version is not on trial.
func (d *Dir) Ready(version string) error {
	s, err := d.readState()
	if err != nil {
		return err
	}
	t := s.Trial
	if t == nil || t.Version != version || t.Starts == 0 {
		return ErrNoTrial
	}
	t.Ready = t.Starts
	if err := d.writeState(s); err != nil {
		return fmt.Errorf("update: %w", err)
	}
	return nil
}

// snapshot copies the store to bin/questbox.db.pre-<version> (d.copy);
// "" when there is no store yet.
func (d *Dir) snapshot(version string) (string, error) {
	if _, err := os.Stat(d.store); errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	name := filepath.Base(d.store) + ".pre-" + version
	if err := d.copy(d.store, filepath.Join(d.bin, name)); err != nil {
		return "", fmt.Errorf("update: snapshot of the store before the trial: %w", err)
	}
	return name, nil
}

func syncRename(tmp, dst string) error {
	f, err := os.Open(tmp)
	if err != nil {
		return err
	}
	err = f.Sync()
	f.Close()
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, dst); err != nil {
		return err
	}
	return syncDir(filepath.Dir(dst))
}

// rollback ends s's trial: the store snapshot replaces the store, the
// trial's binary is removed, Current runs. It writes the state.
func (d *Dir) rollback(s *State, why string) (string, error) {
	t := s.Trial
	if t.Snapshot != "" {
		if err := copyFile(filepath.Join(d.bin, t.Snapshot), d.store); err != nil {
			return "", fmt.Errorf("update: rollback of %s: restoring the store: %w", t.Version, err)
		}
		os.Remove(filepath.Join(d.bin, t.Snapshot))
	}
	if t.File != s.Current.File && (s.Previous == nil || t.File != s.Previous.File) {
		os.Remove(filepath.Join(d.bin, t.File))
	}
	said := fmt.Sprintf("update to %s rolled back to %s: %s; the store is as it was before the update", t.Version, s.Current, why)
	s.Trial, s.Last = nil, said
	if err := d.writeState(*s); err != nil {
		return "", fmt.Errorf("update: %w", err)
	}
	return said, nil
}

// copyFile copies src over dst atomically (a synced temporary file and a
// rename).
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst+".tmp", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return syncRename(dst+".tmp", dst)
}

// Commit keeps the trial of version, which has been ready and healthy for
// the settling time: it becomes Current, the binary it replaced becomes
// Previous (the one before that is removed), the snapshot is dropped.
// ErrNoTrial when version is not on trial.
func (d *Dir) Commit(version string) (State, error) {
	s, err := d.readState()
	if err != nil {
		return State{}, err
	}
	t := s.Trial
	if t == nil || t.Version != version || t.Starts == 0 {
		return s, ErrNoTrial
	}
	if old := s.Previous; old != nil && old.File != "" && old.File != t.File && old.File != s.Current.File {
		os.Remove(filepath.Join(d.bin, old.File))
	}
	prev := s.Current
	s.Previous, s.Current, s.Trial = &prev, t.Slot, nil
	s.Last = fmt.Sprintf("update from %s to %s committed after %d start(s)", prev, t.Version, t.Starts)
	if err := d.writeState(s); err != nil {
		return s, fmt.Errorf("update: %w", err)
	}
	if t.Snapshot != "" {
		os.Remove(filepath.Join(d.bin, t.Snapshot))
	}
	return s, nil
}

// Pending says whether a staged release waits for its first start.
func (d *Dir) Pending() (Slot, bool, error) {
	s, err := d.readState()
	if err != nil || s.Trial == nil || s.Trial.Starts > 0 {
		return Slot{}, false, err
	}
	return s.Trial.Slot, true, nil
}
