package update

import (
	"errors"

	"aead.dev/minisign"

	"github.com/questbox/questbox/internal/release"
)

// Install checks binary and its signature sig against the release key pub
// for a box of target host (release.Check) and, when they pass, stages it
// as the next trial (Stage). A refused release changes nothing; its error
// wraps a release sentinel (ErrUnsigned, ErrOtherKey, ErrBadSignature,
// ErrWrongTarget, ErrNotRelease) and says why. The CLI's `questbox update`
// and the dashboard's upload both install through here.
func (d *Dir) Install(pub minisign.PublicKey, host release.Target, binary, sig []byte) (release.Release, State, error) {
	r, err := release.Check(pub, host, binary, sig)
	if err != nil {
		return r, State{}, err
	}
	s, err := d.Stage(binary, r)
	return r, s, err
}

// Refused says err is a refusal of Install that changed nothing and whose
// message is for the person who sent the release: a release sentinel, or
// ErrOnTrial.
func Refused(err error) bool {
	for _, s := range []error{release.ErrUnsigned, release.ErrOtherKey, release.ErrBadSignature, release.ErrWrongTarget, release.ErrNotRelease, ErrOnTrial} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}
