package store

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestRemoveStaleRestores: a staged restore a crash left behind is removed
// once it is a day old; one that may be under way is not.
func TestRemoveStaleRestores(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	old := filepath.Join(dir, BackupTempPrefix+"old")
	fresh := filepath.Join(dir, BackupTempPrefix+"fresh")
	other := filepath.Join(dir, "questbox-20261203-040000.db")
	for _, p := range []string{old, fresh, other} {
		os.WriteFile(p, []byte("x"), 0o600)
	}
	os.Chtimes(old, now.Add(-25*time.Hour), now.Add(-25*time.Hour))
	os.Chtimes(other, now.Add(-25*time.Hour), now.Add(-25*time.Hour))
	removeStaleRestores(dir, now)
	for p, want := range map[string]bool{old: false, fresh: true, other: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", filepath.Base(p), err == nil, want)
		}
	}
}
