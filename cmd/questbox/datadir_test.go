package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/questbox/questbox/config"
	"github.com/questbox/questbox/engine"
)

// TestWritingVerbNeverCreatesAStoreSilently: with no daemon, no --data, no
// QUESTBOX_DATA and no config file, a writing verb refuses to create a
// store at the built-in default, saying where it would and how to choose;
// reads still answer, and a chosen directory is used as before.
func TestWritingVerbNeverCreatesAStoreSilently(t *testing.T) {
	def := config.Default().Daemon.Data
	db := filepath.Join(def, engine.StoreFile)
	for _, p := range []string{db, config.DefaultPath} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Skipf("this machine has %s: the built-in default is in use here", p)
		}
	}
	if _, err := os.Stat(def); errors.Is(err, fs.ErrNotExist) {
		t.Cleanup(func() { os.RemoveAll(def) }) // what a regression would leave
	}
	t.Setenv("QUESTBOX_CONFIG", "")

	for _, args := range [][]string{
		{"quest", "new", "ocr", "--direction", "free OCR", "--provider", "external"},
		{"scan", "q1", "tesseract jpn"},
	} {
		r := qb(t, "", args...)
		if r.code != exitStore || !strings.Contains(r.stderr, db) || !strings.Contains(r.stderr, "--data DIR") ||
			!strings.Contains(r.stderr, "QUESTBOX_DATA") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 naming %s, --data DIR and QUESTBOX_DATA", args, r.code, r.stderr, db)
		}
		if _, err := os.Stat(db); err == nil {
			t.Fatalf("%v created %s", args, db)
		}
	}
	if r := qb(t, "", "quest", "list"); r.code != 0 {
		t.Errorf("quest list: exit %d (%s), want 0: a read creates nothing and may answer", r.code, r.stderr)
	}

	data := dataDir(t)
	t.Setenv("QUESTBOX_DATA", data)
	must(t, 0, "", "quest", "new", "ocr", "--direction", "free OCR", "--provider", "external")
	t.Setenv("QUESTBOX_DATA", "")
	must(t, 0, "", "scan", "q1", "tesseract jpn", "--data", data)
	if _, err := os.Stat(db); err == nil {
		t.Fatalf("%s was created", db)
	}
}
