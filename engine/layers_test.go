package engine

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependenciesPointInward pins SPEC §1: cmd wires everything; ui and
// device consume the engine; engine uses gates; gates depends on nothing of
// ours. Each package may reach (directly or not) only the listed packages
// of this module. The pins and the button (device) know nothing of quests;
// the box (device/box) joins them to the engine; MQTT (device/mqtt) speaks
// the API's view types (ui/api, which reads the config's types).
func TestDependenciesPointInward(t *testing.T) {
	const mod = "github.com/questbox/questbox/"
	allowed := map[string][]string{
		"engine/...":            {"engine", "gates"},
		"gates/...":             {"gates"},
		"config/...":            {"config", "gates"},
		"device":                {"device"},
		"device/devicetest/...": {"device"},
		"device/box/...":        {"device", "engine", "gates"},
		"device/mqtt/...":       {"device", "engine", "gates", "ui/api", "config"},
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
