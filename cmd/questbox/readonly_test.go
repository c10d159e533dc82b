package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/internal/daemon/daemontest"
)

// TestReadsDoNotWrite: without a daemon, every read-only verb leaves the
// store file as it was, byte for byte and mtime, even with a node left
// running by a crash (its recovery waits for the daemon or the next
// writing command).
func TestReadsDoNotWrite(t *testing.T) {
	data := daemontest.ShortDir(t)
	d := []string{"--data", data}
	must(t, 0, "", append([]string{"quest", "new", "r", "--direction", "reads", "--provider", "external"}, d...)...)
	must(t, 0, "", append([]string{"scan", "q1", "one", "two"}, d...)...)
	must(t, 0, answer("dead", "the first one is a dead end, checked."), append([]string{"submit", "q1", "--node", "n1"}, d...)...)
	path := filepath.Join(data, engine.StoreFile)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"quest", "list"}, {"quest", "list", "--json"}, {"quest", "show", "q1"}, {"status", "q1"}, {"next", "q1"},
		{"next", "q1", "--json"}, {"rules"}, {"rules", "--quest", "q1"}, {"verify"}, {"status", "q9"},
	} {
		qb(t, "", append(args, d...)...)
		after, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Stat(path)
		if !bytes.Equal(before, after) || !fi.ModTime().Equal(old) {
			t.Fatalf("%v changed the store (bytes equal %v, mtime %v, want %v)", args, bytes.Equal(before, after), fi.ModTime(), old)
		}
	}
}
