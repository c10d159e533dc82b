package engine

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestScheduledBackupKeepsN pins the names, the verification and the
// pruning of scheduled backups: the newest keep stay, and each reopens
// with the quest it was made with.
func TestScheduledBackupKeepsN(t *testing.T) {
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal })
	dir := filepath.Join(t.TempDir(), "backups")
	start := time.Date(2026, 12, 3, 4, 0, 0, 0, time.UTC)
	var made []string
	for i := range 4 {
		p, err := h.e.ScheduledBackup(dir, 2, start.Add(time.Duration(i)*24*time.Hour))
		if err != nil {
			t.Fatalf("backup %d: %v", i, err)
		}
		made = append(made, p)
	}
	if got, want := filepath.Base(made[0]), "questbox-20261203-040000.db"; got != want {
		t.Errorf("name %q, want %q", got, want)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(left) != 2 || left[0] != made[2] || left[1] != made[3] {
		t.Errorf("kept %v, want the newest two %v", left, made[2:])
	}
	// A backup restores into a store that reads back the quest.
	data := t.TempDir()
	f, err := os.Open(made[3])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := Restore(data, f, made[3], start)
	if err != nil || rep.Kept != "" || rep.Schema != SchemaVersion || rep.Migrated {
		t.Fatalf("restore into an empty directory: %+v, %v", rep, err)
	}
	st := mustOpenStore(t, data)
	defer st.Close()
	e, err := New(st, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if qs, err := e.Quests(); err != nil || len(qs) != 1 || qs[0].ID != q.ID {
		t.Errorf("restored quests: %v, %v", qs, err)
	}
}

// TestWriteBackupRefusesABadCopy pins that a copy that does not verify is
// not kept, and the file it would have replaced is untouched.
func TestWriteBackupRefusesABadCopy(t *testing.T) {
	h := newHarness(t, Options{})
	h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal })
	path := filepath.Join(t.TempDir(), "b.db")
	os.WriteFile(path, []byte("an older backup"), 0o600)
	_, err := WriteBackup(path, func(w io.Writer) error {
		var b bytes.Buffer
		if _, err := h.e.Backup(&b, nil); err != nil {
			return err
		}
		raw := b.Bytes()
		copy(raw[len(raw)-4096:], bytes.Repeat([]byte{0xff}, 4096)) // a damaged page
		copy(raw[2*4096:], bytes.Repeat([]byte{0xff}, 64))
		_, err := w.Write(raw)
		return err
	})
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a damaged copy: %v, want ErrCorrupt", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "an older backup" {
		t.Errorf("the file was replaced by a copy that did not verify")
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".questbox-backup-*")); len(left) > 0 {
		t.Errorf("temporary copies left: %v", left)
	}
}

// TestRestoreMigratesAnOlderBackup: a backup of an older schema (the
// golden store of schema 4) is migrated in the staged copy, and the file
// named is not written.
func TestRestoreMigratesAnOlderBackup(t *testing.T) {
	src := filepath.Join("testdata", "golden", "schema4", "questbox.db")
	before, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data := t.TempDir()
	rep, err := Restore(data, f, src, time.Now())
	if err != nil || rep.Schema != 4 || !rep.Migrated {
		t.Fatalf("restore of a schema 4 backup: %+v, %v", rep, err)
	}
	if after, _ := os.ReadFile(src); !bytes.Equal(after, before) {
		t.Error("restore wrote to the backup it read")
	}
	st := mustOpenStore(t, data)
	defer st.Close()
	if v, err := st.Verify(); err != nil || v.Schema != SchemaVersion || v.Locked != 2 {
		t.Errorf("the restored store: %+v, %v", v, err)
	}
}
