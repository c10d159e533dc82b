package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/questbox/questbox/internal/daemon"
)

// The drop-ins of docs/agents.md that let the sandboxed daemon use a project
// directory pass `systemd-analyze verify` on top of the unit, as
// scripts/verify-units.sh checks the unit itself; a misspelt directive in
// a drop-in fails it, so the drop-in is really read.
func TestProjectDropInVerifies(t *testing.T) {
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI has systemd-analyze (package systemd)")
		}
		t.Skip("systemd-analyze not found (package systemd)")
	}
	page, err := os.ReadFile("../../docs/agents.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, marker := range []string{"<!-- project-dropin -->", "<!-- project-dropin-home -->"} {
		dropin := fencedAfter(t, string(page), marker)
		if out := verifyWithDropIn(t, dropin); out != "" {
			t.Errorf("docs/agents.md's drop-in after %s:\n%s\nsystemd-analyze verify says:\n%s", marker, dropin, out)
		}
	}
	if out := verifyWithDropIn(t, "[Service]\nReadWritePath=/srv/projects/ocr\n"); !strings.Contains(out, "ReadWritePath") {
		t.Errorf("a misspelt drop-in passed verify (%q): the drop-in is not read", out)
	}
}

// fencedAfter is the body of the first fenced block after marker.
func fencedAfter(t *testing.T, text, marker string) string {
	t.Helper()
	_, rest, ok := strings.Cut(text, marker)
	if !ok {
		t.Fatalf("the page has no %s", marker)
	}
	_, rest, _ = strings.Cut(rest, "```ini\n")
	body, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatalf("no fenced ini block after %s", marker)
	}
	return body
}

// verifyWithDropIn lays questbox.service and dropin into a scratch root
// (with a stand-in binary and this machine's system units) and returns
// what `systemd-analyze verify` prints.
func verifyWithDropIn(t *testing.T, dropin string) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"usr/bin", "bin", "etc/systemd/system/questbox.service.d", "usr/lib/systemd"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"usr/bin/questbox", "bin/kill"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat("/usr/lib/systemd/system"); err == nil {
		if out, err := exec.Command("cp", "-a", "/usr/lib/systemd/system", filepath.Join(root, "usr/lib/systemd/")).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v\n%s", err, out)
		}
	}
	unit, err := os.ReadFile("../../systemd/questbox.service")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "etc/systemd/system/questbox.service"), unit, 0o644)
	os.WriteFile(filepath.Join(root, "etc/systemd/system/questbox.service.d/project.conf"), []byte(dropin), 0o644)
	cmd := exec.Command("systemd-analyze", "verify", "--root="+root, "/etc/systemd/system/questbox.service")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil && len(out) == 0 {
		t.Fatalf("systemd-analyze verify: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// The unit's TimeoutStartSec is daemon.StartTimeout: the time the rest
// of a start-up gets again after a long step (internal/daemon's
// stepTimer) is the unit's own, so a hang after it is caught as soon as
// one before it.
func TestUnitStartTimeout(t *testing.T) {
	u := readUnit(t)
	got, err := time.ParseDuration(u.timeoutStart)
	if err != nil {
		t.Fatalf("questbox.service: TimeoutStartSec=%q: write it as a Go duration too (90s): %v", u.timeoutStart, err)
	}
	if got != daemon.StartTimeout {
		t.Errorf("questbox.service: TimeoutStartSec=%s, daemon.StartTimeout is %s: they must be equal", got, daemon.StartTimeout)
	}
}
