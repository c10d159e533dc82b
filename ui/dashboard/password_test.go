package dashboard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// TestEnsurePassword: a first start makes the password file and writes the
// generated password, which it holds, to the first-password file, both
// owner-only; a later start leaves them; a password file others could read
// is made owner-only and reported, with its credentials unchanged.
func TestEnsurePassword(t *testing.T) {
	dir := t.TempDir()
	path, first := filepath.Join(dir, "dashboard.password"), filepath.Join(dir, "dashboard.first-password")
	ens, err := EnsurePassword(path, first)
	if err != nil || !ens.Generated || ens.Tightened != 0 {
		t.Fatalf("first start: %+v %v, want a generated password", ens, err)
	}
	for _, f := range []string{path, first} {
		if fi, err := os.Stat(f); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v, want mode 0600", f, fi.Mode(), err)
		}
	}
	pw, _ := os.ReadFile(first)
	raw, _ := os.ReadFile(path)
	cred, err := parseCredentials(path, raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := bcrypt.CompareHashAndPassword(cred.hash, []byte(strings.TrimSpace(string(pw)))); err != nil {
		t.Errorf("the first-password file's %q does not open the password file: %v", pw, err)
	}

	if ens, err := EnsurePassword(path, first); err != nil || ens != (Ensured{}) {
		t.Errorf("second start: %+v %v, want nothing done", ens, err)
	}

	os.Chmod(path, 0o644)
	if ens, err := EnsurePassword(path, first); err != nil || ens.Generated || ens.Tightened != 0o644 {
		t.Errorf("a 0644 password file: %+v %v, want it tightened from 0644", ens, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("after tightening: %v %v, want 0600", fi.Mode(), err)
	}
	if now, _ := os.ReadFile(path); string(now) != string(raw) {
		t.Error("tightening changed the credentials")
	}

	if err := ForgetFirstPassword(first); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(first); !os.IsNotExist(err) {
		t.Errorf("the first-password file after ForgetFirstPassword: %v", err)
	}
	if err := ForgetFirstPassword(first); err != nil {
		t.Errorf("forgetting twice: %v", err)
	}
}
