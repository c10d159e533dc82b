// Package release signs questbox release binaries and checks them before
// a box installs one.
//
// A release is a static questbox binary and its minisign signature
// (FILE.minisig), the format Debian's `minisign -Vm FILE -p KEY` checks by
// hand. The signature's trusted comment names what was signed:
//
//	questbox v0.4.0 linux/arm/v6
//
// The trusted comment is covered by the signature, so a box reads the
// version and the target from it and refuses a correctly signed binary
// built for another machine (an armv6 binary on an arm64 box). The target
// is also read from the binary itself — its ELF header and, for arm, the
// GOARM its Go build info records — and must agree with the comment.
//
// The package does no I/O beyond what its callers hand it, except the
// key-file helpers; it knows nothing of where a box keeps its binaries
// (see package update).
package release
