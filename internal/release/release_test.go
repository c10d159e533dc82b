package release_test

import (
	"crypto/rand"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"aead.dev/minisign"

	"github.com/questbox/questbox/internal/buildtest"
	"github.com/questbox/questbox/internal/release"
)

func TestMain(m *testing.M) {
	code := m.Run()
	buildtest.Cleanup()
	os.Exit(code)
}

func newKey(t *testing.T) (minisign.PublicKey, minisign.PrivateKey) {
	t.Helper()
	pub, priv, err := minisign.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return pub, priv
}

func read(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var (
	amd64 = release.Target{OS: "linux", Arch: "amd64"}
	arm64 = release.Target{OS: "linux", Arch: "arm64"}
	armv6 = release.Target{OS: "linux", Arch: "arm", ARM: "6"}
	armv7 = release.Target{OS: "linux", Arch: "arm", ARM: "7"}
)

// TestCheck signs real questbox binaries and checks each refusal names its
// reason: unsigned, another key, changed after signing, another machine.
func TestCheck(t *testing.T) {
	pub, priv := newKey(t)
	_, other := newKey(t)
	host := buildtest.Build(t, buildtest.Variant{Version: "v0.9.0", Arch: "amd64"})
	v6 := buildtest.Build(t, buildtest.Variant{Version: "v0.9.0", Arch: "arm", ARM: "6"})
	bin, bin6 := read(t, host), read(t, v6)

	sig, r, err := release.Sign(priv, bin, "v0.9.0")
	if err != nil {
		t.Fatal(err)
	}
	if want := (release.Release{Version: "v0.9.0", Target: amd64}); r != want {
		t.Fatalf("signed %+v, want %+v", r, want)
	}
	sig6, r6, err := release.Sign(priv, bin6, "v0.9.0")
	if err != nil {
		t.Fatal(err)
	}
	if r6.Target != armv6 {
		t.Fatalf("armv6 binary signed as %v, want %v", r6.Target, armv6)
	}
	otherSig, _, err := release.Sign(other, bin, "v0.9.0")
	if err != nil {
		t.Fatal(err)
	}
	changed := append([]byte(nil), bin...)
	changed[len(changed)/2] ^= 1

	for _, tc := range []struct {
		name     string
		host     release.Target
		bin, sig []byte
		want     error
		say      string
	}{
		{"good", amd64, bin, sig, nil, ""},
		{"unsigned", amd64, bin, nil, release.ErrUnsigned, "not signed"},
		{"other key", amd64, bin, otherSig, release.ErrOtherKey, "signed by another key"},
		{"changed after signing", amd64, changed, sig, release.ErrBadSignature, "does not verify"},
		{"garbage signature", amd64, bin, []byte("untrusted comment: x\nnot base64\n"), release.ErrBadSignature, "cannot be read"},
		{"armv6 on amd64", amd64, bin6, sig6, release.ErrWrongTarget, "signed for linux/arm/v6, this box is linux/amd64"},
		{"armv6 on arm64", arm64, bin6, sig6, release.ErrWrongTarget, "signed for linux/arm/v6, this box is linux/arm64"},
		{"armv6 on armv7", armv7, bin6, sig6, release.ErrWrongTarget, "this box is linux/arm/v7"},
		{"armv6 on armv6", armv6, bin6, sig6, nil, ""},
		// A signature moved to another binary: the key is right, the
		// bytes are not.
		{"amd64 signature on the armv6 binary", armv6, bin6, sig, release.ErrBadSignature, "does not verify"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := release.Check(pub, tc.host, tc.bin, tc.sig)
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if err != nil && !strings.Contains(err.Error(), tc.say) {
				t.Errorf("got %q, want it to say %q", err, tc.say)
			}
		})
	}
}

// TestMinisignVerifies checks a signature by hand with Debian's minisign,
// as the README tells a person to, and that minisign refuses another key.
func TestMinisignVerifies(t *testing.T) {
	mini, err := exec.LookPath("minisign")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("minisign is not installed (make test installs it: TEST_DEBS)")
		}
		t.Skip("minisign is not installed (apt-get install minisign)")
	}
	pub, priv := newKey(t)
	otherPub, _ := newKey(t)
	dir := t.TempDir()
	bin := buildtest.Build(t, buildtest.Variant{Version: "v0.9.0", Arch: "amd64"})
	file := filepath.Join(dir, "questbox-linux-amd64")
	if err := os.WriteFile(file, read(t, bin), 0o755); err != nil {
		t.Fatal(err)
	}
	sig, _, err := release.Sign(priv, read(t, file), "v0.9.0")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file+".minisig", sig, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, k := range map[string]minisign.PublicKey{"release.pub": pub, "other.pub": otherPub} {
		b, err := k.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command(mini, "-Vm", file, "-p", filepath.Join(dir, "release.pub")).CombinedOutput()
	if err != nil {
		t.Fatalf("minisign -Vm: %v\n%s", err, out)
	}
	if want := "Trusted comment: questbox v0.9.0 linux/amd64"; !strings.Contains(string(out), want) {
		t.Errorf("minisign said %q, want %q", out, want)
	}
	out, err = exec.Command(mini, "-Vm", file, "-p", filepath.Join(dir, "other.pub")).CombinedOutput()
	if err == nil {
		t.Errorf("minisign verified with another key:\n%s", out)
	}
	// The key file the package reads is the one minisign reads.
	k, err := release.ReadPublicKey(filepath.Join(dir, "release.pub"))
	if err != nil || k.ID() != pub.ID() {
		t.Fatalf("ReadPublicKey: %v, id %X want %X", err, k.ID(), pub.ID())
	}
}

// TestSignRefuses: a release always says its version, and only questbox
// is signed.
func TestSignRefuses(t *testing.T) {
	_, priv := newKey(t)
	bin := read(t, buildtest.Build(t, buildtest.Variant{Version: "v0.9.0", Arch: "amd64"}))
	for _, v := range []string{"", "dev", "v1 v2"} {
		if _, _, err := release.Sign(priv, bin, v); !errors.Is(err, release.ErrNotRelease) {
			t.Errorf("version %q: got %v, want %v", v, err, release.ErrNotRelease)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := release.Sign(priv, read(t, self), "v0.9.0"); !errors.Is(err, release.ErrNotRelease) {
		t.Errorf("the test binary: got %v, want %v", err, release.ErrNotRelease)
	}
}
