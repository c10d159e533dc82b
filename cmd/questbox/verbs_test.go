package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/questbox/questbox/internal/daemon/daemontest"
)

// step is one CLI invocation of the both-ways script. {D} stands for the
// data directory and {F} for a scratch directory of the side running it.
type step struct {
	name  string
	code  int
	stdin string
	args  []string
}

// bothWays is a script that exercises every verb that goes through the
// API, including refusals (exit 1), FAIL (3) and not-found errors.
var bothWays = []step{
	{"quest new", 0, "", []string{"quest", "new", "ocr", "--direction", "free OCR for invoices", "--provider", "external"}},
	{"quest new --json", 0, "", []string{"quest", "new", "solo", "--direction", "d", "--mode", "solo", "--provider", "external", "--json"}},
	{"quest new without direction", 1, "", []string{"quest", "new", "x"}},
	{"quest new unknown gate", 1, "", []string{"quest", "new", "x", "--direction", "d", "--gate", "nope"}},
	{"quest new bad mode", 1, "", []string{"quest", "new", "x", "--direction", "d", "--mode", "crowd"}},
	{"quest list", 0, "", []string{"quest", "list"}},
	{"quest list --json", 0, "", []string{"quest", "list", "--json"}},
	{"scan", 0, "", []string{"scan", "q1", "tesseract jpn", "PaddleOCR", "manga-ocr"}},
	{"scan duplicate --json", 0, "", []string{"scan", "q1", "PaddleOCR", "--json"}},
	{"scan stdin", 0, "easyocr\n\n", []string{"scan", "q1", "-"}},
	{"scan unknown quest", 1, "", []string{"scan", "q9", "h"}},
	{"next", 0, "", []string{"next", "q1"}},
	{"next --json", 0, "", []string{"next", "q1", "--json"}},
	{"submit PASS", 0, answer("dead", "tesseract does not read this layout well."), []string{"submit", "q1", "--node", "n1"}},
	{"submit FAIL", 3, "no json here", []string{"submit", "q1", "--node", "n2"}},
	{"submit FAIL --json", 3, "{}", []string{"submit", "q1", "--node", "n2", "--json"}},
	{"submit to a locked node", 1, answer("dead", "tesseract does not read this layout well."), []string{"submit", "q1", "--node", "n1"}},
	{"submit unknown node", 1, "x", []string{"submit", "q1", "--node", "n99"}},
	{"consent list", 0, "", []string{"consent", "list"}},
	{"consent list --json", 0, "", []string{"consent", "list", "--json"}},
	{"consent show of a locked node", 1, "", []string{"consent", "show", "n1"}},
	{"status", 0, "", []string{"status", "q1"}},
	{"status --json", 0, "", []string{"status", "q1", "--json"}},
	{"status unknown", 1, "", []string{"status", "q9"}},
	{"quest show", 0, "", []string{"quest", "show", "q1"}},
	{"quest show --json", 0, "", []string{"quest", "show", "q1", "--json"}},
	{"quest result", 0, "", []string{"quest", "result", "q1"}},
	{"quest result --json", 0, "", []string{"quest", "result", "q1", "--json"}},
	{"quest result unknown", 1, "", []string{"quest", "result", "q9"}},
	{"export stdout", 0, "", []string{"export", "q1"}},
	{"export again", 0, "", []string{"export", "q1"}},
	{"quest abort-node", 0, "", []string{"quest", "abort-node", "n3", "--reason", "not needed"}},
	{"quest abort-node locked", 1, "", []string{"quest", "abort-node", "n1"}},
	{"export --out", 0, "", []string{"export", "q1", "--out", "{F}/out.jsonl"}},
	{"export --out --json", 0, "", []string{"export", "q1", "--out", "{F}/out.jsonl", "--json"}},
	{"export --out unwritable", 1, "", []string{"export", "q1", "--out", "{F}/no/such/dir/x.jsonl"}},
	{"rules", 0, "", []string{"rules"}},
	{"rules --json", 0, "", []string{"rules", "--json"}},
	{"rules --quest", 0, "", []string{"rules", "--quest", "q1"}},
	{"rules --gate unknown", 1, "", []string{"rules", "--gate", "nope"}},
	{"rules both flags", 1, "", []string{"rules", "--gate", "default", "--quest", "q1"}},
	{"quest stop", 0, "", []string{"quest", "stop", "q1"}},
	{"quest stop --json", 0, "", []string{"quest", "stop", "q2", "--json"}},
	{"quest resume", 0, "", []string{"quest", "resume", "q1"}},
	{"quest resume unknown", 1, "", []string{"quest", "resume", "q9"}},
	{"tick", 0, "", []string{"tick"}},
	{"tick --json", 0, "", []string{"tick", "--json"}},
	{"verify", 0, "", []string{"verify"}},
	{"verify --json", 0, "", []string{"verify", "--json"}},
	{"too many arguments", 1, "", []string{"status", "q1", "q2"}},
}

var (
	timestamps = regexp.MustCompile(`\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?`)
	clockTimes = regexp.MustCompile(`\b\d\d:\d\d:\d\d\b`)
	// A running daemon counts wall-clock time; the CLI alone does not.
	wallClock = regexp.MustCompile(`"wall_clock(_seconds)?": ("[^"]*"|\d+)`)
	// The same in text: "wall clock 1s/24h0m0s", "23h59m59s of 24h0m0s wall
	// clock" (a second passes on a slow machine, e.g. under qemu).
	wallText = regexp.MustCompile(`wall clock [0-9hms.]+/|[0-9hms.]+ of ([0-9hms.]+ wall clock)`)
	// Each side is a box of its own: its device key, and so its export
	// batches' signatures (over lines that hold their times).
	keyPrints  = regexp.MustCompile(`SHA256:[A-Za-z0-9+/]{43}`)
	exportSeal = regexp.MustCompile(`\{"export_seal":.*\}`)
	// configLine is status's word on the running daemon's config, which
	// only a daemon has.
	configLine = regexp.MustCompile(`(?m)^config: generation \d+, loaded .*\n`)
)

// normalise removes what legitimately differs between two runs: the
// directories, the times, the wall clock a running daemon counts, and
// each box's device key and signatures, and the running daemon's config
// generation.
func normalise(s, data, scratch string) string {
	s = configLine.ReplaceAllString(s, "")
	s = strings.ReplaceAll(s, scratch, "{F}")
	s = strings.ReplaceAll(s, data, "{D}")
	s = exportSeal.ReplaceAllString(s, `{"export_seal":SEAL}`)
	s = keyPrints.ReplaceAllString(s, "SHA256:KEY")
	s = timestamps.ReplaceAllString(s, "TIME")
	s = wallClock.ReplaceAllString(s, `"wall_clock$1": WALL`)
	s = wallText.ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasPrefix(m, "wall clock ") {
			return "wall clock WALL/"
		}
		return "WALL of " + wallText.FindStringSubmatch(m)[1]
	})
	return clockTimes.ReplaceAllString(s, "TIME")
}

// TestEveryVerbBothWays runs the same script against a store without a
// daemon (the CLI serves the API in-process) and through a running daemon
// (the control socket): every step must give the same exit code, stdout
// and stderr.
func TestEveryVerbBothWays(t *testing.T) {
	type side struct {
		data, scratch string
		got           []result
	}
	var sides [2]side
	for i, viaDaemon := range []bool{false, true} {
		s := &sides[i]
		s.data, s.scratch = daemontest.ShortDir(t), t.TempDir()
		if viaDaemon {
			startDaemon(t, s.data)
		}
		for _, st := range bothWays {
			args := make([]string, len(st.args))
			for j, a := range st.args {
				args[j] = strings.ReplaceAll(a, "{F}", s.scratch)
			}
			r := qb(t, st.stdin, append(args, "--data", s.data)...)
			if r.code != st.code {
				t.Errorf("daemon %v: %s: exit %d, want %d\nstdout: %s\nstderr: %s", viaDaemon, st.name, r.code, st.code, r.stdout, r.stderr)
			}
			r.stdout, r.stderr = normalise(r.stdout, s.data, s.scratch), normalise(r.stderr, s.data, s.scratch)
			s.got = append(s.got, r)
		}
	}
	for i, st := range bothWays {
		a, b := sides[0].got[i], sides[1].got[i]
		if a != b {
			t.Errorf("%s differs:\nwithout a daemon: exit %d\n%s%s\nthrough the daemon: exit %d\n%s%s", st.name, a.code, a.stdout, a.stderr, b.code, b.stdout, b.stderr)
		}
	}
	// The exactly-once file holds each exported node once on both sides.
	for _, s := range sides {
		lines := nodeLines(readLines(t, filepath.Join(s.scratch, "out.jsonl")))
		if len(lines) != 1 || !strings.Contains(lines[0], `"id":"n3"`) {
			t.Errorf("out.jsonl: %q, want only n3 (n1 went to stdout)", lines)
		}
	}
}

// TestDeviceVerbsNeedADaemon: the LEDs and the button live in the daemon;
// without one, device verbs say so and exit 2.
func TestDeviceVerbsNeedADaemon(t *testing.T) {
	data := daemontest.ShortDir(t)
	for _, args := range [][]string{{"device", "status"}, {"device", "press", "--hold", "2s"}} {
		r := must(t, 2, "", append(args, "--data", data)...)
		if !strings.Contains(r.stderr, "no questbox daemon is running") {
			t.Errorf("%v without a daemon said %q", args, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(data, "questbox.db")); err == nil {
		t.Error("a device verb without a daemon created a store")
	}
}
