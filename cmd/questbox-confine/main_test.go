package main

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/questbox/questbox/internal/buildtest"
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

// Run by hand, without a launcher's verb, it says what it is and exits 2.
func TestByHandItSaysWhatItIs(t *testing.T) {
	for _, args := range [][]string{nil, {"--help"}, {"run"}} {
		out, err := exec.Command(buildtest.Launcher(t), args...).CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "questbox-confine: questbox starts this launcher of its confined runs; it is not run by hand") {
			t.Errorf("questbox-confine %q: %v, %q; want exit 2 saying what it is", args, err, out)
		}
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	buildtest.Cleanup()
	os.Exit(code)
}
