package engine

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependenciesPointInward pins SPEC §1: cmd wires everything; ui and
// device consume the engine; engine uses gates; gates depends on nothing of
// ours. Each package may reach (directly or not) only the listed packages
// of this module. The device package itself (LEDs, button) knows nothing of
// the engine; device/box joins the two. clock, the one source of time, is
// a leaf that the engine and the device use and gates never does.
func TestDependenciesPointInward(t *testing.T) {
	const mod = "github.com/questbox/questbox/"
	allowed := map[string][]string{
		"clock/...":  {"clock"},
		"engine/...": {"engine", "gates", "clock"},
		"gates/...":  {"gates"},
		"config/...": {"config", "engine", "gates", "clock"},
		"device":     {"device", "clock"},
		"device/box": {"device", "engine", "gates", "clock"},
		"ui/...":     {"ui", "device", "engine", "gates", "config", "clock"},
	}
	for pattern, may := range allowed {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "./../"+pattern).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", pattern, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			rest, ours := strings.CutPrefix(dep, mod)
			if !ours {
				continue
			}
			ok := false
			for _, m := range may {
				ok = ok || rest == m || strings.HasPrefix(rest, m+"/")
			}
			if !ok {
				t.Errorf("%s reaches %s; it may only use %v", pattern, dep, may)
			}
		}
	}
}

// TestCmdHoldsNoStore pins that cmd/questbox reaches the store only through
// the engine's API: it never imports bbolt itself.
func TestCmdHoldsNoStore(t *testing.T) {
	for _, pkg := range []string{"./../cmd/...", "./../ui/...", "./../device/..."} {
		out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}: {{join .Imports \" \"}}", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", pkg, err, out)
		}
		for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
			if strings.Contains(line, "go.etcd.io/bbolt") {
				t.Errorf("%s imports bbolt; store access belongs to the engine", strings.SplitN(line, ":", 2)[0])
			}
		}
	}
}
