package main

import (
	"github.com/questbox/questbox/ui/api"

	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/engine/storetest"
)

// TestSalvage breaks one page of a real store (the root of the event
// outbox) and checks that salvage keeps everything else.
func TestSalvage(t *testing.T) {
	data := t.TempDir()
	must(t, 0, "", "quest", "new", "keep", "--direction", "survive a bad page", "--provider", "external", "--data", data)
	var hyps []string
	for i := range 300 {
		hyps = append(hyps, fmt.Sprintf("hypothesis number %d with some padding to fill pages", i))
	}
	must(t, 0, "", append([]string{"scan", "q1", "--data", data}, hyps...)...)
	must(t, 0, answer("dead", "the first hypothesis is a dead end, checked."), "submit", "q1", "--node", "n1", "--data", data)

	path := filepath.Join(data, engine.StoreFile)
	corruptBucketRoot(t, path, "events")
	r := must(t, 2, "", "verify", "--data", data)
	if !strings.Contains(r.stderr, "questbox salvage") {
		t.Fatalf("verify of the damaged store said %q", r.stderr)
	}

	r = must(t, 0, "", "salvage", "--data", data)
	t.Logf("salvage:\n%s%s", r.stdout, r.stderr)
	if !strings.Contains(r.stdout, "events") {
		t.Errorf("salvage did not report the lost events:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "verify: ok") {
		t.Errorf("the salvaged ledger does not verify:\n%s", r.stdout)
	}
	var st api.Status
	decode(t, must(t, 0, "", "status", "q1", "--json", "--data", data), &st)
	if st.Total != 300 || st.Counts[string(engine.Aborted)] != 1 {
		t.Errorf("after salvage: %d nodes, %d aborted; want 300, 1", st.Total, st.Counts[string(engine.Aborted)])
	}
	must(t, 0, "", "verify", "--data", data)
	// The engine works on the salvaged store: the quest takes answers.
	must(t, 0, answer("dead", "the second hypothesis is a dead end too."), "submit", "q1", "--node", "n2", "--data", data)
	r = must(t, 0, "", "salvage", "--data", data)
	if !strings.Contains(r.stdout, "not corrupt") {
		t.Errorf("salvage of a healthy store printed %q", r.stdout)
	}
}

// corruptBucketRoot overwrites the root page of a top-level bucket with
// garbage.
func corruptBucketRoot(t *testing.T, path, bucket string) {
	t.Helper()
	f, err := storetest.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	root, err := f.BucketRoot(bucket)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Garbage(root); err != nil {
		t.Fatal(err)
	}
}
