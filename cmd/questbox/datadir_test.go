package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/internal/config"
)

// TestWritingVerbNeverCreatesAStoreSilently: with no daemon, no --data, no
// QUESTBOX_DATA and no config file, a writing verb refuses to create a
// store at the built-in default, saying where it would and how to choose;
// a read says there is no store there, and a chosen directory is used as
// before.
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
	if r := qb(t, "", "quest", "list"); r.code != exitStore || !strings.Contains(r.stderr, "no store at "+def) {
		t.Errorf("quest list: exit %d (%s), want 2 naming %s: a read creates nothing, and says there is nothing", r.code, r.stderr, def)
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

// TestReadingVerbsNeedAStore: without a daemon, a reading verb on a data
// directory without a store (missing, or empty) exits 2 naming it and
// asking whether the daemon uses another, and creates nothing: "no quests
// yet" would hide a wrong --data.
func TestReadingVerbsNeedAStore(t *testing.T) {
	root := t.TempDir()
	empty := filepath.Join(root, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(root, "no", "such", "dir")
	for _, dir := range []string{missing, empty} {
		for _, args := range [][]string{
			{"quest", "list"}, {"quest", "list", "--json"}, {"quest", "show", "q1"}, {"status", "q1"}, {"runs"}, {"consent", "list"},
			{"consent", "show", "n1"},
		} {
			r := qb(t, "", append(args, "--data", dir)...)
			want := "questbox: no store at " + dir + " (is the daemon running with another --data? QUESTBOX_DATA?)\n"
			if r.code != exitStore || r.stderr != want || r.stdout != "" {
				t.Errorf("%v on %s: exit %d, stdout %q, stderr %q; want exit 2 and %q", args, dir, r.code, r.stdout, r.stderr, want)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(root, "no")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a read created %s", filepath.Join(root, "no"))
	}
	if ents, err := os.ReadDir(empty); err != nil || len(ents) != 0 {
		t.Errorf("a read wrote into the empty directory: %v %v", ents, err)
	}
	// The leading --data of the example, and QUESTBOX_DATA.
	must(t, exitStore, "", "--data", missing, "quest", "list")
	t.Setenv("QUESTBOX_DATA", missing)
	if r := must(t, exitStore, "", "quest", "list"); !strings.Contains(r.stderr, "no store at "+missing) {
		t.Errorf("with QUESTBOX_DATA: %q", r.stderr)
	}
}
