package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/questbox/questbox/internal/buildtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	buildtest.Cleanup()
	os.Exit(code)
}

// TestKeygenSignVerify is make release in small: a key pair, a signed
// questbox binary, and Debian's minisign checking it by hand.
func TestKeygenSignVerify(t *testing.T) {
	dir := t.TempDir()
	if err := run([]string{"keygen", dir}, os.Getenv, io.Discard); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "release.key")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("release.key: %v, %v; want mode 0600", fi, err)
	}
	bin := filepath.Join(dir, "questbox-linux-arm64")
	body, err := os.ReadFile(buildtest.Build(t, buildtest.Variant{Version: "v0.3.0", Arch: "arm64"}))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, body, 0o755); err != nil {
		t.Fatal(err)
	}
	env := func(k string) string {
		if k == "QUESTBOX_RELEASE_KEY" {
			return filepath.Join(dir, "release.key")
		}
		return ""
	}
	if err := run([]string{"sign", "--version", "v0.3.0", bin}, func(string) string { return "" }, io.Discard); err == nil || !strings.Contains(err.Error(), "QUESTBOX_RELEASE_KEY is not set") {
		t.Errorf("sign without a key: %v", err)
	}
	if err := run([]string{"sign", "--version", "v0.3.0", bin}, env, io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"pub", filepath.Join(dir, "again.pub")}, env, io.Discard); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(dir, "release.pub"))
	b, _ := os.ReadFile(filepath.Join(dir, "again.pub"))
	if string(a) != string(b) {
		t.Errorf("pub wrote %q, keygen %q", b, a)
	}
	mini, err := exec.LookPath("minisign")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("minisign is not installed (make test installs it: TEST_DEBS)")
		}
		t.Skip("minisign is not installed")
	}
	out, err := exec.Command(mini, "-Vm", bin, "-p", filepath.Join(dir, "release.pub")).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Trusted comment: questbox v0.3.0 linux/arm64") {
		t.Errorf("minisign -Vm: %v\n%s", err, out)
	}
}
