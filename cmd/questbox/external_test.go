package main

import (
	"github.com/questbox/questbox/ui/api"

	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine"
)

// TestExternalAgent is the external-agent and ratchet acceptance of the
// Foundation issue, through the CLI as a user types it.
func TestExternalAgent(t *testing.T) {
	data := dataDir(t)
	d := []string{"--data", data}
	cmd := func(args ...string) []string { return append(args, d...) }

	var q struct{ ID string }
	decode(t, must(t, 0, "", cmd("quest", "new", "invoices", "--direction", "find the most accurate free OCR for Japanese invoices",
		"--provider", "external", "--max-tries", "2", "--json")...), &q)
	if q.ID == "" {
		t.Fatal("quest new --json printed no id")
	}
	if r := must(t, 0, "", cmd("quest", "new", "plain", "--direction", "x", "--provider", "external")...); strings.TrimSpace(r.stdout) != "q2" {
		t.Errorf("quest new printed %q, want the id q2", r.stdout)
	}

	hyps := []string{"tesseract with the jpn_vert model", "PaddleOCR japan model", "manga-ocr on cropped fields"}
	var scan engine.ScanResult
	decode(t, must(t, 0, "", cmd(append([]string{"scan", q.ID, "--json"}, hyps...)...)...), &scan)
	if len(scan.Added) != 3 || len(scan.Skipped) != 0 {
		t.Fatalf("first scan: added %v skipped %v, want 3 added", scan.Added, scan.Skipped)
	}
	// Again, from a file (and with different case): nothing new.
	from := filepath.Join(t.TempDir(), "hyps.txt")
	os.WriteFile(from, []byte("\n"+strings.ToUpper(hyps[0])+"\n"+hyps[1]+"\n\n"+hyps[2]+"\n"), 0o644)
	decode(t, must(t, 0, "", cmd("scan", q.ID, "--from", from, "--json")...), &scan)
	if len(scan.Added) != 0 || len(scan.Skipped) != 3 {
		t.Fatalf("repeated scan: added %v skipped %v, want 0 added, 3 skipped", scan.Added, scan.Skipped)
	}
	if r := must(t, 1, "", cmd("scan", q.ID)...); !strings.Contains(r.stderr, "no hypotheses") {
		t.Errorf("scan without hypotheses said %q", r.stderr)
	}

	r := must(t, 0, "", cmd("next", q.ID)...)
	if !strings.Contains(r.stdout, hyps[0]) || !strings.Contains(r.stdout, "```json") {
		t.Errorf("next prompt lacks the hypothesis or the output contract:\n%s", r.stdout)
	}
	var work map[string]any
	decode(t, must(t, 0, "", cmd("next", q.ID, "--json")...), &work)
	for _, k := range []string{"node", "role", "hypothesis", "prompt", "attempt", "quest"} {
		if _, ok := work[k]; !ok {
			t.Errorf("next --json lacks %q: %v", k, work)
		}
	}
	first := work["node"].(string)

	// A valid answer: PASS, exit 0; "dead" locks the node as aborted.
	r = must(t, 0, answer("dead", "jpn_vert misreads most invoice fields in a 20-page sample."), cmd("submit", q.ID, "--node", first)...)
	if !strings.HasPrefix(r.stdout, "PASS") || !strings.Contains(r.stdout, "aborted") {
		t.Errorf("submit of a valid answer printed:\n%s", r.stdout)
	}

	// A broken answer: FAIL with the facts, exit 3.
	decode(t, must(t, 0, "", cmd("next", q.ID, "--json")...), &work)
	second := work["node"].(string)
	in := filepath.Join(t.TempDir(), "answer.txt")
	os.WriteFile(in, []byte("```json\n{\"verdict\": \"maybe\", \"evidence\": \"short\"}\n```\n"), 0o644)
	r = must(t, 3, "", cmd("submit", q.ID, "--node", second, "--in", in)...)
	if !strings.HasPrefix(r.stdout, "FAIL") || !strings.Contains(r.stdout, "contract @ verdict") || !strings.Contains(r.stdout, "tries 1/2") || r.stderr != "" {
		t.Errorf("submit of a broken answer printed:\n%s", r.stdout)
	}

	var st api.Status
	decode(t, must(t, 0, "", cmd("status", q.ID, "--json")...), &st)
	if st.Total != 3 || st.Counts[string(engine.Pending)] != 2 || st.Counts[string(engine.Aborted)] != 1 {
		t.Errorf("status counts %v (total %d), want pending 2, aborted 1", st.Counts, st.Total)
	}
	if st.Remaining.AgentRuns != st.Limits.MaxAgentRuns-2 {
		t.Errorf("remaining agent runs %d, want %d", st.Remaining.AgentRuns, st.Limits.MaxAgentRuns-2)
	}

	// Export: the terminal node once, then nothing.
	out := filepath.Join(t.TempDir(), "export.jsonl")
	r = must(t, 0, "", cmd("export", q.ID, "--out", out)...)
	if lines := nodeLines(readLines(t, out)); len(lines) != 1 || !strings.Contains(lines[0], `"id":"`+first+`"`) {
		t.Fatalf("export wrote %q, want one line for %s", lines, first)
	}
	r = must(t, 0, "", cmd("export", q.ID, "--out", out)...)
	if lines := nodeLines(readLines(t, out)); len(lines) != 1 {
		t.Errorf("second export appended: file has %d lines", len(lines))
	}
	if !strings.Contains(r.stderr, "exported 0") {
		t.Errorf("second export said %q", r.stderr)
	}

	// The ratchet: a terminal node takes no submission.
	r = must(t, 1, answer("dead", "trying to rewrite a locked verdict here."), cmd("submit", q.ID, "--node", first)...)
	if !strings.Contains(r.stderr, "questbox: node "+first+" is aborted") {
		t.Errorf("submit to a terminal node said %q", r.stderr)
	}

	// max_tries FAILs exhaust the node.
	r = must(t, 3, "no json at all", cmd("submit", q.ID, "--node", second)...)
	if !strings.Contains(r.stdout, "exhausted") {
		t.Errorf("last FAIL printed:\n%s", r.stdout)
	}
	r = must(t, 1, "no json at all", cmd("submit", q.ID, "--node", second)...)
	if !strings.Contains(r.stderr, "is exhausted") {
		t.Errorf("submit to an exhausted node said %q", r.stderr)
	}

	// Nothing pending is not an error.
	must(t, 0, answer("dead", "the third hypothesis does not hold either."), cmd("submit", q.ID, "--node", "n3")...)
	r = must(t, 0, "", cmd("next", q.ID, "--json")...)
	if strings.TrimSpace(r.stdout) != "{\n  \"node\": null,\n  \"quest\": \"q1\"\n}" || !strings.Contains(r.stderr, "nothing is pending") {
		t.Errorf("next with nothing pending: stdout %q stderr %q", r.stdout, r.stderr)
	}
	var show api.QuestDetail
	decode(t, must(t, 0, "", cmd("quest", "show", q.ID, "--json")...), &show)
	if len(show.Nodes) != 3 || show.Nodes[1].Status != api.NodeExhausted || show.Nodes[1].Tries != 2 {
		t.Errorf("quest show: %d nodes, n2 %s with %d tries", len(show.Nodes), show.Nodes[1].Status, show.Nodes[1].Tries)
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// nodeLines are the node lines of an export: its lines but each batch's
// signature line (api.ExportSealLine).
func nodeLines(lines []string) []string {
	var out []string
	for _, l := range lines {
		if !strings.HasPrefix(l, `{"export_seal":`) {
			out = append(out, l)
		}
	}
	return out
}
