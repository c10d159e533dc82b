package scratch

import (
	"os"
	"testing"
)

func TestDirRemovedUnlessKept(t *testing.T) {
	for _, keep := range []bool{false, true} {
		dir, done, err := Dir("qbscratchtest", keep)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dir+"/f", []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		done()
		_, err = os.Stat(dir)
		switch {
		case keep && err != nil:
			t.Errorf("keep: the directory is gone: %v", err)
		case !keep && !os.IsNotExist(err):
			t.Errorf("not kept: the directory is still there (%v)", err)
		}
		os.RemoveAll(dir)
	}
}
