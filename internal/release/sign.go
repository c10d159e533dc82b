package release

import (
	"fmt"
	"os"
	"strings"

	"aead.dev/minisign"
)

// Release is what a signature's trusted comment says was signed.
type Release struct {
	Version string
	Target  Target
}

// Comment is the trusted comment: "questbox VERSION TARGET".
func (r Release) Comment() string {
	return fmt.Sprintf("questbox %s %s", r.Version, r.Target)
}

func parseComment(c string) (Release, error) {
	f := strings.Fields(c)
	if len(f) != 3 || f[0] != "questbox" {
		return Release{}, fmt.Errorf("%w: the signature's trusted comment %q is not \"questbox VERSION TARGET\"", ErrNotRelease, c)
	}
	t, err := ParseTarget(f[2])
	if err != nil {
		return Release{}, fmt.Errorf("%w: the signature's trusted comment: %v", ErrNotRelease, err)
	}
	return Release{Version: f[1], Target: t}, nil
}

// Sign signs binary, built as version, with key and returns the signature
// file's contents (FILE.minisig). The target in the trusted comment is read
// from the binary itself (Inspect). version must be one word and not "dev"
// or empty, so that a release always says what it is.
func Sign(key minisign.PrivateKey, binary []byte, version string) ([]byte, Release, error) {
	t, err := Inspect(binary)
	if err != nil {
		return nil, Release{}, err
	}
	v := version
	if v == "" || v == "dev" || strings.ContainsAny(v, " \t\n") {
		return nil, Release{}, fmt.Errorf("%w: version %q is not a release version (one word, not dev)", ErrNotRelease, v)
	}
	r := Release{Version: v, Target: t}
	untrusted := "questbox release signature (minisign -Vm FILE -p release.pub)"
	return minisign.SignWithComments(key, binary, r.Comment(), untrusted), r, nil
}

// ReadPrivateKey reads a minisign secret key file: unencrypted (as
// `minisign -G -W` writes it) or encrypted with password.
func ReadPrivateKey(path, password string) (minisign.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return minisign.PrivateKey{}, fmt.Errorf("release key: %w", err)
	}
	var k minisign.PrivateKey
	if minisign.IsEncrypted(b) {
		k, err = minisign.DecryptKey(password, b)
	} else {
		err = k.UnmarshalText(b)
	}
	if err != nil {
		return minisign.PrivateKey{}, fmt.Errorf("release key %s: %w", path, err)
	}
	return k, nil
}

// ReadPublicKey reads a minisign public key file (release.pub).
func ReadPublicKey(path string) (minisign.PublicKey, error) {
	k, err := minisign.PublicKeyFromFile(path)
	if err != nil {
		return minisign.PublicKey{}, fmt.Errorf("release public key: %w", err)
	}
	return k, nil
}
