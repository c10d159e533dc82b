package release

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Target is the machine a binary runs on: GOOS, GOARCH and, for arm, the
// GOARM level. Its String form ("linux/arm64", "linux/arm/v6") is the one
// in a signature's trusted comment.
type Target struct {
	OS, Arch string
	// ARM is the GOARM level ("6", "7") for Arch "arm", else "".
	ARM string
}

func (t Target) String() string {
	s := t.OS + "/" + t.Arch
	if t.ARM != "" {
		s += "/v" + t.ARM
	}
	return s
}

// ParseTarget reads a Target's String form.
func ParseTarget(s string) (Target, error) {
	parts := strings.Split(s, "/")
	switch {
	case len(parts) == 2 && parts[0] != "" && parts[1] != "" && parts[1] != "arm":
		return Target{OS: parts[0], Arch: parts[1]}, nil
	case len(parts) == 3 && parts[1] == "arm" && strings.HasPrefix(parts[2], "v") && len(parts[2]) > 1:
		return Target{OS: parts[0], Arch: "arm", ARM: parts[2][1:]}, nil
	}
	return Target{}, fmt.Errorf("target %q: want OS/ARCH or OS/arm/vN", s)
}

// Host is the target of the running binary: the runtime's GOOS and GOARCH
// and, on arm, the GOARM its build info records.
func Host() Target {
	t := Target{OS: runtime.GOOS, Arch: runtime.GOARCH}
	if t.Arch == "arm" {
		if bi, ok := debug.ReadBuildInfo(); ok {
			t.ARM = armLevel(bi.Settings)
		}
	}
	return t
}

// armLevel is the GOARM level of build settings: "6" of "6" or
// "6,softfloat"; "" when none is recorded.
func armLevel(settings []debug.BuildSetting) string {
	for _, s := range settings {
		if s.Key == "GOARM" {
			level, _, _ := strings.Cut(s.Value, ",")
			return level
		}
	}
	return ""
}

// Inspect reads which machine binary is built for, from its ELF header
// and its Go build info (the two must agree), and checks that it is
// questbox. The version is not read: a -trimpath build does not record
// its -ldflags; the signature vouches for it.
func Inspect(binary []byte) (Target, error) {
	f, err := readELF(binary)
	if err != nil {
		return Target{}, fmt.Errorf("%w: not an ELF executable: %v", ErrNotRelease, err)
	}
	arch, ok := elfArch[f.machine]
	if !ok {
		return Target{}, fmt.Errorf("%w: ELF machine %d is not one questbox is built for", ErrNotRelease, f.machine)
	}
	bi, err := readBuildInfo(f)
	if err != nil {
		return Target{}, fmt.Errorf("%w: no Go build info: %v", ErrNotRelease, err)
	}
	if bi.Path != "github.com/questbox/questbox/cmd/questbox" {
		return Target{}, fmt.Errorf("%w: the binary is %q, not questbox", ErrNotRelease, bi.Path)
	}
	t := Target{OS: "linux", Arch: arch}
	var goos, goarch string
	for _, s := range bi.Settings {
		switch s.Key {
		case "GOOS":
			goos = s.Value
		case "GOARCH":
			goarch = s.Value
		}
	}
	if goos != "" {
		t.OS = goos
	}
	if goarch != arch {
		return Target{}, fmt.Errorf("%w: the ELF header says %s, the Go build info %s", ErrNotRelease, arch, goarch)
	}
	if arch == "arm" {
		if t.ARM = armLevel(bi.Settings); t.ARM == "" {
			return Target{}, fmt.Errorf("%w: an arm binary without a GOARM level in its build info", ErrNotRelease)
		}
	}
	return t, nil
}
