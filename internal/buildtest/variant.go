package buildtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Variant says how to build a questbox binary that differs from the one
// Questbox builds: another version string, another target, build tags.
type Variant struct {
	// Version is set with -ldflags "-X main.version=…"; "" leaves "dev".
	Version string
	// Arch and ARM are GOARCH and GOARM; "" is the host's.
	Arch, ARM string
	// Tags is passed to -tags (comma-separated).
	Tags string
	// X is one more -X setting ("github.com/questbox/questbox/internal/daemon.fault=start"), or "".
	X string
}

func (v Variant) name() string {
	return strings.NewReplacer("/", "_", " ", "_", ",", "+", "=", "_").Replace(fmt.Sprintf("questbox-%s-%s%s-%s-%s", v.Version, v.Arch, v.ARM, v.Tags, v.X))
}

var (
	variantsMu sync.Mutex // guards variants and variantDir
	variants   = map[Variant]string{}
	variantDir string
)

// Build returns the path of cmd/questbox built as v (CGO off, -trimpath),
// building it at the first call for v in the test binary; Cleanup removes
// it. Under -short the test is skipped, as with Questbox.
func Build(t testing.TB, v Variant) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds questbox binaries")
	}
	variantsMu.Lock()
	defer variantsMu.Unlock()
	if p, ok := variants[v]; ok {
		return p
	}
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	if variantDir == "" {
		if variantDir, err = os.MkdirTemp("", "qbvariants"); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(variantDir, v.name())
	args := []string{"build", "-trimpath", "-o", p}
	var ld []string
	if v.Version != "" {
		ld = append(ld, "-X main.version="+v.Version)
	}
	if v.X != "" {
		ld = append(ld, "-X "+v.X)
	}
	if len(ld) > 0 {
		args = append(args, "-ldflags", strings.Join(ld, " "))
	}
	if v.Tags != "" {
		args = append(args, "-tags", v.Tags)
	}
	cmd := exec.Command("go", append(args, "./cmd/questbox")...)
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if v.Arch != "" {
		cmd.Env = append(cmd.Env, "GOARCH="+v.Arch)
	}
	if v.ARM != "" {
		cmd.Env = append(cmd.Env, "GOARM="+v.ARM)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	variants[v] = p
	return p
}
