package engine

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/runlog"
)

// filesWith lists the files under dir that hold any of secrets.
func filesWith(t *testing.T, dir string, secrets ...string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				out = append(out, fmt.Sprintf("%s holds %q", path, s))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A real command agent writes a key and a configured secret to its stderr,
// each in two writes, and answers (or exits 3, its stderr's tail quoted in
// its error): no file under the data directory, the store and the run
// logs included, holds either; the logs hold the masks instead. The
// agent is local: logs are masked whatever the vendor.
func TestRunLogsRedacted(t *testing.T) {
	const token = "tok-S3CRET-42"
	leak := `cat >/dev/null; printf 'using the key sk-live-01' >&2; printf '23456789 now\n' >&2; printf 'and tok-S3C' >&2; printf 'RET-42\n' >&2`
	ok := fmt.Sprintf("%s; printf '%%s' '%s'", leak, strings.ReplaceAll(answer("dead", "nothing to find in this direction"), "'", ""))
	provs := map[string]Provider{}
	for name, script := range map[string]string{"answers": ok, "crashes": leak + "; exit 3"} {
		c, err := agent.NewCommand(agent.CommandConfig{Name: name, Argv: []string{"/bin/sh", "-c", script},
			Timeout: time.Minute, OutputCap: 1 << 20, Env: []string{"PATH"}})
		if err != nil {
			t.Fatal(err)
		}
		provs[name] = c
	}
	h := newHarness(t, Options{Providers: provs, Vendors: map[string]string{"answers": VendorLocal, "crashes": VendorLocal},
		Redaction: NewRedaction(redactKeys, secretsOf{token}), MaxParallel: 2})
	dir := h.dir // the data directory: the store, and the logs beside it
	logs, err := runlog.Open(filepath.Join(dir, "logs"), runlog.MinPerRun, 64*runlog.MinPerRun)
	if err != nil {
		t.Fatal(err)
	}
	h.opt.Logs = logs
	h.restart()
	for _, p := range []string{"answers", "crashes"} {
		h.quest(func(s *QuestSpec) { s.Provider, s.Mode, s.Roles = p, ModeSolo, []string{RoleScout} })
	}
	h.tick()
	runs, err := h.e.QuestRuns("", "")
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs %+v, %v; want two", runs, err)
	}
	for _, r := range runs {
		if (r.Outcome == "FAIL") != (r.Provider == "crashes") {
			t.Errorf("run %s of %s: %s, want the crash to fail and the answer to pass", r.ID, r.Provider, r.Outcome)
		}
	}
	h.close() // the store's last pages on disk
	if leaks := filesWith(t, dir, secret, "sk-live", token); len(leaks) > 0 {
		t.Errorf("secrets on disk:\n%s", strings.Join(leaks, "\n"))
	}
	if masked := filesWith(t, filepath.Join(dir, "logs"), "using the key "+RedactMask+" now\nand xxxxx\n"); len(masked) != 2 {
		t.Errorf("%d logs hold the masked lines, want both: %v", len(masked), masked)
	}
	if masked := filesWith(t, dir, "exited with status 3"); len(masked) == 0 {
		t.Error("no file keeps the crash's error: the test does not reach the store")
	}
}
