package main

import (
	"github.com/questbox/questbox/internal/daemon/daemontest"
	"github.com/questbox/questbox/ui/api"

	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/questbox/questbox/gates"
)

// An answer of several megabytes is a FAIL like any oversize answer, with
// or without a daemon; the CLI keeps one byte past the gate's limit (the
// daemon never holds the rest) and says how large the answer really was.
func TestHugeAnswerIsCutAndFails(t *testing.T) {
	data := daemontest.ShortDir(t)
	d := []string{"--data", data}
	must(t, 0, "", append([]string{"quest", "new", "big", "--direction", "d", "--provider", "external"}, d...)...)
	must(t, 0, "", append([]string{"scan", "q1", "one", "two"}, d...)...)
	huge := strings.Repeat("a", 5<<20)
	in := filepath.Join(t.TempDir(), "huge")
	if err := os.WriteFile(in, []byte(huge), 0o600); err != nil {
		t.Fatal(err)
	}
	wantNote := fmt.Sprintf("the answer was %d bytes; the gate reads at most %d, so only the first %d were submitted",
		len(huge), gates.MaxAnswerBytes, gates.MaxAnswerBytes+1)
	wantFact := fmt.Sprintf("FAIL contract @ answer: expected at most %d bytes, got %d bytes", gates.MaxAnswerBytes, gates.MaxAnswerBytes+1)

	check := func(how string, r result) {
		t.Helper()
		if !strings.Contains(r.stdout, wantFact) || !strings.Contains(r.stderr, wantNote) {
			t.Errorf("%s: stdout %q\nstderr %q\nwant the fact %q and the note %q", how, r.stdout, r.stderr, wantFact, wantNote)
		}
	}
	check("without a daemon", must(t, 3, huge, append([]string{"submit", "q1", "--node", "n1"}, d...)...))

	daemon := startDaemon(t, data)
	check("through the daemon", must(t, 3, "", append([]string{"submit", "q1", "--node", "n2", "--in", in}, d...)...))
	if err := daemon.stop(); err != nil {
		t.Fatal(err)
	}
	v := showQuest(t, data, "q1")
	for _, id := range []string{"n1", "n2"} {
		n := nodeOf(t, v, id)
		if n.Status != api.NodePending || n.Tries != 1 {
			t.Errorf("%s after a huge answer: %s with %d tries, want pending with 1", id, n.Status, n.Tries)
		}
	}
}

// A hypotheses file over a mebibyte is refused before anything is added.
func TestHugeHypothesesFileIsRefused(t *testing.T) {
	data := dataDir(t)
	d := []string{"--data", data}
	must(t, 0, "", append([]string{"quest", "new", "big", "--direction", "d", "--provider", "external"}, d...)...)
	from := filepath.Join(t.TempDir(), "hyps")
	if err := os.WriteFile(from, []byte(strings.Repeat("another hypothesis\n", 60000)), 0o600); err != nil {
		t.Fatal(err)
	}
	r := must(t, 1, "", append([]string{"scan", "q1", "--from", from}, d...)...)
	if !strings.Contains(r.stderr, "is 1140000 bytes; a hypotheses list may be at most 1048576") {
		t.Errorf("stderr %q", r.stderr)
	}
	var st api.Status
	decode(t, must(t, 0, "", append([]string{"status", "q1", "--json"}, d...)...), &st)
	if st.Total != 0 {
		t.Errorf("the refused scan added %d nodes", st.Total)
	}
}
