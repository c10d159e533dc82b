package release

import "errors"

// The reasons a release is refused. Every error Check returns wraps one of
// them; callers tell them apart with errors.Is and print the error, which
// says the details.
var (
	// ErrUnsigned is returned when a binary comes without a signature.
	ErrUnsigned = errors.New("the release is not signed")
	// ErrOtherKey is returned when the signature was made by a key other
	// than the box's release key.
	ErrOtherKey = errors.New("the release is signed by another key")
	// ErrBadSignature is returned when the signature does not verify: the
	// binary or its trusted comment changed after signing.
	ErrBadSignature = errors.New("the release signature does not verify")
	// ErrWrongTarget is returned when a correctly signed binary is built
	// for another machine than the box.
	ErrWrongTarget = errors.New("the release is for another machine")
	// ErrNotRelease is returned when the file is not a questbox binary, or
	// its signature's trusted comment is not a questbox release's.
	ErrNotRelease = errors.New("the file is not a questbox release")
)
