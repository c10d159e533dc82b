package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryLeavesOutHeavyPackages pins what was taken out of the binary to
// keep it small (docs/design.md, "Light and nothing lost"): text/template,
// whose method calls make the linker keep every exported method of every type
// (role prompts use engine/prompttmpl), and debug/elf, debug/buildinfo and
// the DWARF, Mach-O and PE readers they bring (the release check reads the
// ELF header and the build info itself). Tests may still import them.
func TestBinaryLeavesOutHeavyPackages(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 {
		t.Fatalf("go list -deps listed %d packages; want the binary's whole tree:\n%s", len(deps), out)
	}
	for _, dep := range deps {
		switch dep {
		case "text/template", "html/template", "debug/elf", "debug/buildinfo", "debug/dwarf", "debug/macho", "debug/pe":
			t.Errorf("the questbox binary imports %s", dep)
		}
	}
}
