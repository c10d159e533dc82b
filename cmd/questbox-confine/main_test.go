package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The launcher stays small: of this module it reaches internal/confine
// alone, and it imports nothing but that and the standard library.
func TestImportsOnlyTheLauncher(t *testing.T) {
	const mod = "github.com/questbox/questbox/"
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	reached := 0
	for line := range strings.Lines(string(out)) {
		pkg, std, _ := strings.Cut(strings.TrimSpace(line), " ")
		reached++
		switch {
		case std == "true", pkg == mod+"cmd/questbox-confine", pkg == mod+"internal/confine", pkg == "golang.org/x/sys/unix":
		default:
			t.Errorf("questbox-confine reaches %s", pkg)
		}
	}
	if reached < 10 {
		t.Fatalf("go list -deps listed %d packages; want the launcher's whole tree:\n%s", reached, out)
	}
}
