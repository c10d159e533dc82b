package release

import (
	"fmt"

	"aead.dev/minisign"
)

// Check decides whether binary, with its signature file's contents sig
// (nil or empty when there is none), may be installed on a box of target
// host whose release key is pub. It returns what the signature says was
// signed, or an error wrapping one of the package's sentinels and naming
// the reason: unsigned, another key, a signature that does not verify, a
// binary for another machine.
func Check(pub minisign.PublicKey, host Target, binary, sig []byte) (Release, error) {
	if len(sig) == 0 {
		return Release{}, fmt.Errorf("%w: no minisign signature came with it", ErrUnsigned)
	}
	var s minisign.Signature
	if err := s.UnmarshalText(sig); err != nil {
		return Release{}, fmt.Errorf("%w: the signature cannot be read: %v", ErrBadSignature, err)
	}
	if s.KeyID != pub.ID() {
		return Release{}, fmt.Errorf("%w: key %016X signed it, the box trusts key %016X", ErrOtherKey, s.KeyID, pub.ID())
	}
	if !minisign.Verify(pub, binary, sig) {
		return Release{}, fmt.Errorf("%w: the file or its trusted comment changed after signing", ErrBadSignature)
	}
	r, err := parseComment(s.TrustedComment)
	if err != nil {
		return Release{}, err
	}
	if r.Target != host {
		return r, fmt.Errorf("%w: questbox %s is signed for %s, this box is %s", ErrWrongTarget, r.Version, r.Target, host)
	}
	t, err := Inspect(binary)
	if err != nil {
		return r, err
	}
	if t != host {
		return r, fmt.Errorf("%w: the binary is built for %s, this box is %s", ErrWrongTarget, t, host)
	}
	return r, nil
}
