package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/questbox/questbox/internal/daemon/daemontest"
	"github.com/questbox/questbox/ui/api"
)

// exportFixture starts a daemon with a quest of three terminal nodes whose
// lines are a few KiB each.
func exportFixture(t *testing.T) (data string, c *api.Client) {
	t.Helper()
	data = daemontest.ShortDir(t)
	startDaemon(t, data)
	d := []string{"--data", data}
	must(t, 0, "", append([]string{"quest", "new", "x", "--direction", "export", "--provider", "external"}, d...)...)
	must(t, 0, "", append([]string{"scan", "q1", "one", "two", "three"}, d...)...)
	for _, n := range []string{"n1", "n2", "n3"} {
		must(t, 0, answer("dead", n+" "+strings.Repeat("is a dead end; ", 200)), append([]string{"submit", "q1", "--node", n}, d...)...)
	}
	sock := filepath.Join(data, "questbox.sock")
	return data, api.NewClient(api.SocketClient(sock), sock)
}

// exportedIDs reads an export file and counts each node id in it.
func exportedIDs(t *testing.T, path string) map[string]int {
	t.Helper()
	seen := map[string]int{}
	for _, line := range nodeLines(readLines(t, path)) {
		var r struct{ ID string }
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%s: a line is not JSON (%v): %.80q", path, err, line)
		}
		seen[r.ID]++
	}
	return seen
}

func wantEachOnce(t *testing.T, path string) {
	t.Helper()
	seen := exportedIDs(t, path)
	for _, id := range []string{"n1", "n2", "n3"} {
		if seen[id] != 1 {
			t.Errorf("%s holds %s %d times, want once (%v)", path, id, seen[id], seen)
		}
	}
	if len(seen) != 3 {
		t.Errorf("%s holds %v, want n1 n2 n3", path, seen)
	}
}

// TestExportFailingOut: an --out that cannot be opened exports nothing;
// the next export emits every node.
func TestExportFailingOut(t *testing.T) {
	data, _ := exportFixture(t)
	dir := t.TempDir()
	r := must(t, 1, "", "export", "q1", "--out", filepath.Join(dir, "missing", "x.jsonl"), "--data", data)
	if !strings.Contains(r.stderr, "no such file or directory") {
		t.Errorf("failing --out said %q", r.stderr)
	}
	ok := filepath.Join(dir, "ok.jsonl")
	must(t, 0, "", "export", "q1", "--out", ok, "--data", data)
	wantEachOnce(t, ok)
}

// TestExportFullDisk: the disk fills while the lines are written; the file
// is cut back to what it held, nothing is acknowledged, and once there is
// room the next export writes every node once.
func TestExportFullDisk(t *testing.T) {
	if os.Getuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("this test mounts a small tmpfs as a full disk and needs root (CI runs as root)")
		}
		t.Skip("needs root to mount a tmpfs")
	}
	data, _ := exportFixture(t)
	disk := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=8k", "tmpfs", disk).CombinedOutput(); err != nil {
		t.Fatalf("mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", disk).Run() })
	out := filepath.Join(disk, "export.jsonl")
	os.WriteFile(out, []byte("{\"earlier\":\"line\"}\n"), 0o644)

	r := must(t, 1, "", "export", "q1", "--out", out, "--data", data)
	if !strings.Contains(r.stderr, "no space left on device") || !strings.Contains(r.stderr, "the file is as it was") {
		t.Errorf("full disk said %q", r.stderr)
	}
	if b, _ := os.ReadFile(out); string(b) != "{\"earlier\":\"line\"}\n" {
		t.Errorf("after the failed export the file holds %d bytes, want the earlier line only", len(b))
	}
	if out, err := exec.Command("mount", "-o", "remount,size=1m", disk).CombinedOutput(); err != nil {
		t.Fatalf("grow the tmpfs: %v: %s", err, out)
	}
	must(t, 0, "", "export", "q1", "--out", out, "--data", data)
	lines := readLines(t, out)
	if len(nodeLines(lines)) != 4 || lines[0] != `{"earlier":"line"}` {
		t.Fatalf("after the retry: %d lines, want the earlier one and 3 nodes", len(lines))
	}
	must(t, 0, "", "export", "q1", "--out", out, "--data", data)
	os.WriteFile(out, []byte(strings.Join(lines[1:], "\n")+"\n"), 0o644)
	wantEachOnce(t, out)
}

// TestExportClientKilled: a client that dies after receiving the batch —
// before writing, in the middle of writing, or after writing but before
// acknowledging — leaves nothing twice in the file: the next export to it
// cuts the file back to the journaled size and writes the batch once.
func TestExportClientKilled(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(f *os.File, lines []string)
	}{
		{"before writing", func(*os.File, []string) {}},
		{"while writing", func(f *os.File, lines []string) {
			f.WriteString(lines[0])
			f.WriteString(lines[1][:len(lines[1])/2])
		}},
		{"after writing, before the ack", func(f *os.File, lines []string) {
			for _, l := range lines {
				f.WriteString(l)
			}
			f.Sync()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, c := exportFixture(t)
			out := filepath.Join(t.TempDir(), "export.jsonl")
			f, err := os.OpenFile(out, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			b, err := c.ExportBegin(context.Background(), "q1", api.ExportRequest{File: out, Size: 0})
			if err != nil || len(b.Lines) != 3 {
				t.Fatalf("begin: %d lines, %v", len(b.Lines), err)
			}
			tc.write(f, b.Lines)
			f.Close() // the client dies here: no ack

			r := must(t, 1, "", "export", "q1", "--out", filepath.Join(t.TempDir(), "elsewhere.jsonl"), "--data", data)
			if !strings.Contains(r.stderr, "interrupted export to "+out) {
				t.Errorf("export elsewhere while one is unfinished said %q", r.stderr)
			}
			r = must(t, 0, "", "export", "q1", "--out", out, "--data", data)
			if !strings.Contains(r.stderr, "exported 3 nodes") {
				t.Errorf("the retry said %q", r.stderr)
			}
			wantEachOnce(t, out)
			r = must(t, 0, "", "export", "q1", "--out", out, "--data", data)
			if !strings.Contains(r.stderr, "exported 0 nodes") {
				t.Errorf("a third export said %q", r.stderr)
			}
			wantEachOnce(t, out)
		})
	}
}
