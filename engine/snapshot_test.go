package engine

import (
	"path/filepath"
	"testing"
)

// TestSnapshotStore: the copy opens as a store with the same quests and
// verifies; a file that is not a store is refused.
func TestSnapshotStore(t *testing.T) {
	dir := t.TempDir()
	st, err := OpenStore(dir, StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := New(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	spec := eng.NewQuestSpec("kept", "a quest the snapshot must hold")
	spec.Provider = ProviderExternal
	q, err := eng.NewQuest(spec)
	if err != nil {
		t.Fatal(err)
	}
	eng.Shutdown(0)
	st.Close()

	snapDir := t.TempDir()
	if err := SnapshotStore(filepath.Join(dir, StoreFile), filepath.Join(snapDir, StoreFile)); err != nil {
		t.Fatal(err)
	}
	cp, err := OpenStore(snapDir, StoreOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	rep, err := cp.Verify()
	if err != nil || len(rep.Problems) > 0 {
		t.Fatalf("the snapshot does not verify: %+v, %v", rep, err)
	}
	eng2, err := New(cp, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng2.Quest(q.ID); err != nil {
		t.Errorf("the snapshot lacks quest %s: %v", q.ID, err)
	}
	if err := SnapshotStore(filepath.Join(dir, "missing.db"), filepath.Join(snapDir, "x")); err == nil {
		t.Error("a missing store was snapshotted")
	}
}
